"""The stack bench/flash_sale.py drives: the checkout's docker-compose processes (web,
websockets, worker, beat) run from its .venv on 127.0.0.1, and the CPU they use."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with contextlib.closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def compose_services(checkout: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """(command, environment) of the checkout's web, worker and beat services, and of its
    websocket tier `ws` where the checkout has one.  Of the environment only plain settings
    are kept: URLs, secrets and `${...}` values are ours."""
    import yaml

    services = yaml.safe_load((checkout / "docker-compose.yml").read_text())["services"]
    # Behind nginx the compose file has several web nodes (web1, web2): the bench runs one.
    if "web" not in services and "web1" in services:
        services["web"] = services["web1"]
    out = {}
    for name in ("web", "ws", "worker", "beat"):
        if name not in services:
            continue
        env = services[name].get("environment") or {}
        plain = {
            k: str(v)
            for k, v in env.items()
            if "${" not in str(v)
            and not k.endswith("_URL")
            and "SECRET" not in k
            # The bench's DATABASE_URL is PostgreSQL itself, not compose's PgBouncer.
            and k != "DB_PGBOUNCER"
        }
        out[name] = (list(services[name]["command"]), plain)
    return out


def localise(
    command: list[str], *, checkout: Path, port: int, workers: int | None, ws_port: int = 0
) -> list[str]:
    """The compose command, run from the checkout's venv on 127.0.0.1:<port> (the websocket
    tier's 8001 on <ws_port>)."""
    out = []
    for token in command:
        token = token.replace("0.0.0.0:8000", f"127.0.0.1:{port}")
        token = {"0.0.0.0": "127.0.0.1", "8000": str(port), "8001": str(ws_port)}.get(token, token)
        out.append(token)
    if workers is not None:
        for flag in ("--workers", "--web-workers"):
            if flag in out:
                out[out.index(flag) + 1] = str(workers)
    binary = checkout / ".venv" / "bin" / out[0]
    if binary.exists():
        out[0] = str(binary)
    return out


class Stack:
    def __init__(
        self,
        *,
        checkout: Path,
        env: dict[str, str],
        port: int,
        workers: int | None,
        web_command: str | None = None,
        web_threads: int | None = None,
    ):
        self.checkout, self.env, self.port, self.workers = checkout, env, port, workers
        self.web_threads = web_threads
        self.base_env = dict(env)
        self.web_command = web_command
        self.logdir = Path(tempfile.mkdtemp(prefix="flash-sale-"))
        self.procs: dict[str, subprocess.Popen] = {}
        self.ws_port = free_port()

    def start(self) -> None:
        for name, (command, compose_env) in compose_services(self.checkout).items():
            if name == "ws" and self.web_command:
                continue  # another web server under test serves its own websockets
            cmd = localise(
                command,
                checkout=self.checkout,
                port=self.port,
                workers=self.workers if name == "web" else None,
                ws_port=self.ws_port,
            )
            if name == "web" and self.web_threads:
                compose_env = {**compose_env, "WEB_THREADS": str(self.web_threads)}
                if "--blocking-threads" in cmd:  # granian's HTTP threads
                    cmd[cmd.index("--blocking-threads") + 1] = str(self.web_threads)
            if name == "web" and self.web_command:
                cmd = localise(
                    shlex.split(self.web_command), checkout=self.checkout, port=self.port,
                    workers=None,
                )  # fmt: skip
            log = open(self.logdir / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
            print(f"  start {name}: {shlex.join(cmd)}  {compose_env or ''}", flush=True)
            self.procs[name] = subprocess.Popen(
                cmd,
                cwd=self.checkout,
                env={**self.env, **compose_env},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        import urllib.request

        for _ in range(240):
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise SystemExit(f"{name} died; see {self.logdir / (name + '.log')}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/healthz", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            raise SystemExit(f"web did not answer; see {self.logdir}")
        time.sleep(2)  # let every web worker finish importing

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str | None:
        """Where the pages' websockets go: the websocket tier, as the proxy in front routes
        `/ws/` (docker-compose.yml), or the web server itself."""
        return f"http://127.0.0.1:{self.ws_port}" if "ws" in self.procs else None

    def restart(self, extra_env: dict[str, str], *, between=None) -> None:
        """Stop everything, run `between` (e.g. flush Redis), start again with the original
        environment plus `extra_env`."""
        self.stop()
        if between:
            between()
        self.env = {**self.base_env, **extra_env}
        self.procs = {}
        self.start()

    def stop(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)

    def groups(self) -> dict[str, list[int]]:
        import psutil

        out = {}
        for name, proc in self.procs.items():
            with contextlib.suppress(psutil.NoSuchProcess):
                root = psutil.Process(proc.pid)
                out[name] = [root.pid] + [c.pid for c in root.children(recursive=True)]
        return out

    def web_rss(self) -> list[float]:
        """RSS in MB of each process that serves HTTP (the children, or the one process)."""
        import psutil

        root = psutil.Process(self.procs["web"].pid)
        children = [
            c
            for c in root.children(recursive=True)
            if "resource_tracker" not in " ".join(c.cmdline())
        ]
        return [p.memory_info().rss / 2**20 for p in (children or [root])]


def postgres_pids() -> list[int]:
    import psutil

    return [p.pid for p in psutil.process_iter(["name"]) if p.info["name"] == "postgres"]


class CpuMeter:
    """CPU seconds per process group between two snapshots (processes alive at the end)."""

    def __init__(self, groups: dict[str, list[int]]):
        self.before = {name: self._times(pids) for name, pids in groups.items()}
        self.started = time.monotonic()

    @staticmethod
    def _times(pids: list[int]) -> dict[int, float]:
        import psutil

        out = {}
        for pid in pids:
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                t = psutil.Process(pid).cpu_times()
                out[pid] = t.user + t.system
        return out

    def stop(self, groups: dict[str, list[int]]) -> dict[str, float]:
        wall = time.monotonic() - self.started
        result = {}
        for name, pids in groups.items():
            now = self._times(pids)
            before = self.before.get(name, {})
            used = sum(t - before.get(pid, 0.0) for pid, t in now.items())
            result[name] = used / wall * 100  # percent of one core
        return result
