"""The short block `manage.py serve` prints once the server answers: where it is, how to log
in (lines a caller hands over, e.g. the demo's logins), where the API docs are and what needs
Redis.  Printed last, so a newcomer finds it at the bottom of the terminal, not above a page
of start-up lines."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

EMBEDDED_REDIS_NOTE = (
    "not needed: this is the embedded mode (SQLite, one process; the queue runs in-process). "
    "Set REDIS_URL (and DATABASE_URL) for several web processes, a separate worker and beat, "
    "and the Redis hold filters."
)
REDIS_NOTE = "in use (REDIS_URL): cache, Celery broker, channel layer, waiting-room queue."


def ready_block(*, base_url: str, embedded: bool, welcome: Path | None) -> str:
    lines = ["", f"Seatkeeper is ready: {base_url}/"]
    if welcome is not None and welcome.exists():
        lines += [f"  {line}" for line in welcome.read_text().splitlines() if line.strip()]
    lines += [
        f"  {'admin':<15}{base_url}/admin/",
        f"  {'API docs':<15}{base_url}/api/docs/  (OpenAPI schema: {base_url}/api/schema/)",
        f"  {'Redis':<15}{EMBEDDED_REDIS_NOTE if embedded else REDIS_NOTE}",
        "Stop with Ctrl+C.",
    ]
    return "\n".join(lines)


def announce_when_up(
    *, host: str, port: int, write: Callable[[str], None], block: str, timeout: float = 300
) -> threading.Thread:
    """Write `block` once something accepts connections on (host, port)."""
    target = "127.0.0.1" if host in {"0.0.0.0", "::", ""} else host

    def wait_then_write() -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((target, port), timeout=1):
                    break
            except OSError:
                time.sleep(0.3)
        else:
            return
        write(block)

    thread = threading.Thread(target=wait_then_write, name="ready-banner", daemon=True)
    thread.start()
    return thread
