"""Documents that must not drift from the code, and files that must not be committed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kernel.schedules import registered_schedules

ROOT = Path(__file__).resolve().parents[2]


def human(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds >= 300 and seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"


def beat_table() -> list[list[str]]:
    text = (ROOT / "docs" / "workers.md").read_text()
    section = text[text.index("## Beat: exactly one") :]
    rows = re.findall(r"^\|(.+)\|$", section.split("\n\n", 2)[1], re.MULTILINE)
    return [[cell.strip() for cell in row.split("|")] for row in rows[2:]]  # no header


def test_docs_workers_lists_every_beat_schedule_as_the_code_has_it():
    expected = [
        [f"`{s.name}`", f"`{s.task}`", human(s.every_seconds), human(s.expire_seconds)]
        for s in registered_schedules()
    ]
    documented = [
        [name, task.split(" ", 1)[0], every, expire] for name, task, every, expire in beat_table()
    ]
    assert documented == expected


def test_the_lock_order_is_stated_once_and_referred_to_everywhere_else():
    architecture = (ROOT / "docs" / "architecture.md").read_text()
    assert architecture.count("## Lock order") == 1
    mentions = []
    code = [
        path
        for top in ROOT.iterdir()
        if top.is_dir() and not top.name.startswith(".") and top.name != "tests"
        for path in top.rglob("*.py")
    ]
    for path in [*code, *ROOT.glob("docs/*.md"), ROOT / "README.md"]:
        if path == ROOT / "docs" / "architecture.md":
            continue
        # a comment or docstring paragraph that names the lock order must point at the one
        # statement of it, not restate it
        for paragraph in re.split(r"\n\s*(?:#\s*)?\n", path.read_text()):
            if re.search(r"lock order", paragraph, re.IGNORECASE):
                mentions.append((path.relative_to(ROOT), "docs/architecture.md" in paragraph))
    assert mentions, "bookings/ and payments/ services refer to the lock order"
    assert [m for m in mentions if not m[1]] == []


@pytest.mark.skipif(
    not (ROOT / ".git").exists() or shutil.which("git") is None, reason="not a git checkout"
)
def test_no_beat_schedule_files_are_committed():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert [f for f in tracked if f.startswith("celerybeat-schedule")] == []
    ignored = subprocess.run(
        ["git", "check-ignore", "celerybeat-schedule.dat", "celerybeat-schedule.db"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert ignored == ["celerybeat-schedule.dat", "celerybeat-schedule.db"]
