"""The programs a test run needs beyond Python (scripts/run_tests.py, which re-exports these
names): which test directories need which, installed with apt-get when missing and we are root,
else a message that says what to install."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Tool:
    command: str
    package: str  # Debian's
    tests: str  # the test directory that needs it


TOOLS = (
    Tool("chromium", "chromium", "tests/pages"),
    Tool("docker-compose", "docker-compose", "tests/project"),
    # Every run puts PgBouncer in front of its PostgreSQL (the pooled tests); the proxy test
    # starts a real nginx.
    Tool("pgbouncer", "pgbouncer", "tests"),
    Tool("nginx", "nginx", "tests/project"),
    # The proof-of-work's scrypt in JavaScript is checked against hashlib under Node.
    Tool("node", "nodejs", "tests/waitroom"),
)


def selected_paths(args: Sequence[str], root: Path = ROOT) -> list[Path]:
    """The test paths named on the command line; none named means all of `tests/`."""
    paths = []
    for arg in args:
        if arg.startswith("-"):
            continue
        path = (root / arg.split("::", 1)[0]).resolve()
        if path.exists():
            paths.append(path)
    return paths or [root / "tests"]


def tools_needed(args: Sequence[str], root: Path = ROOT) -> list[Tool]:
    paths = selected_paths(args, root)
    needed = []
    for tool in TOOLS:
        tests = (root / tool.tests).resolve()
        if any(p == tests or tests in p.parents or p in tests.parents for p in paths):
            needed.append(tool)
    return needed


def ensure_tools(
    tools: Sequence[Tool],
    *,
    which: Callable[[str], str | None] = shutil.which,
    is_root: bool | None = None,
    run: Callable[..., object] = subprocess.run,
) -> None:
    """Install the missing tools with apt-get as root; otherwise stop and say what to install."""
    missing = [t for t in tools if which(t.command) is None]
    if not missing:
        return
    packages = [t.package for t in missing]
    if is_root is None:
        is_root = os.geteuid() == 0
    if is_root and which("apt-get"):
        print(f"Installing {' '.join(packages)} (apt-get) ...", file=sys.stderr, flush=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        run(["apt-get", "update", "-qq"], check=True, env=env)
        run(["apt-get", "install", "-y", "-qq", *packages], check=True, env=env)
        missing = [t for t in missing if which(t.command) is None]
        if not missing:
            return
    lines = [
        f"  {t.command!r} (Debian package {t.package}) for {t.tests}, not found on PATH"
        for t in missing
    ]
    sys.exit(
        "The tests need programs that are not installed:\n"
        + "\n".join(lines)
        + f"\nInstall them:  sudo apt-get install -y {' '.join(t.package for t in missing)}\n"
        "(./scripts/test installs them itself when it runs as root on Debian.)"
    )
