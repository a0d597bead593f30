"""A fresh web process builds its URL reverse table (per language) and its channel layer at
start (config/warmup.py), not inside the first customers' holds at the on-sale moment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
from channels.layers import channel_layers
from django.conf import settings
from django.urls import get_resolver

def built():
    languages = set(get_resolver()._reverse_dict)
    return {
        "languages": sorted(code for code, _ in settings.LANGUAGES if code in languages),
        "layer": "default" in channel_layers.backends,
    }

print("before", built())
import {module}
print("after", built())
"""


def probe(module: str) -> dict[str, str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.replace("{module}", module)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return dict(line.split(" ", 1) for line in result.stdout.splitlines())


def test_the_asgi_and_wsgi_entry_points_warm_up_before_serving():
    from django.conf import settings

    every_language = sorted(code for code, _ in settings.LANGUAGES)
    for module in ("config.asgi", "config.wsgi"):
        seen = probe(module)
        # Django builds these lazily: nothing exists before the entry point is imported ...
        assert seen["before"] == str({"languages": [], "layer": False}), module
        # ... and everything a hold needs exists once it has been.
        assert seen["after"] == str({"languages": every_language, "layer": True}), module


FROZEN = """
import gc, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import config.wsgi
print(gc.get_freeze_count(), gc.get_threshold()[0])
"""


def printed(script: str, **env: str) -> list[str]:
    """The words a fresh Python process running `script` prints, with `env` added."""
    import os

    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, **env},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def frozen(**env: str) -> tuple[int, int]:
    count, gen0 = printed(FROZEN, **env)
    return int(count), int(gen0)


def test_the_wsgi_entry_point_freezes_its_warmed_up_heap_out_of_the_collectors_way():
    count, gen0 = frozen()
    # Django, the URL tables and the channel layer: tens of thousands of objects, frozen.
    assert count > 50_000
    assert gen0 == 7000
    # The control: switched off, the process keeps Python's defaults (nothing frozen).
    assert frozen(WEB_GC_FREEZE="0") == (0, 700)


NATS_LOADED = """
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import config.wsgi
import {module}
print(sorted(name for name in ("nats", "aiohttp") if name in sys.modules))
"""


def loads_the_event_logs_client(module: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", NATS_LOADED.replace("{module}", module)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return eval(result.stdout.strip().splitlines()[-1])  # a list of names, printed above


def test_a_web_process_kicking_the_relay_does_not_load_the_event_logs_client():
    # Every web process imports kernel.tasks to kick the outbox relay after a commit; the
    # event log's NATS client (and aiohttp under it) is the worker's, 8.5 MB of RSS.
    assert loads_the_event_logs_client("kernel.tasks") == []
    # The control: the relay itself does load it, so the probe can see it.
    assert loads_the_event_logs_client("kernel.eventlog.relay") == ["aiohttp", "nats"]


OPENED_AHEAD = """
import gc, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import config.asgi
from kernel.database_backend import ahead
print(ahead.kept("default"), gc.get_freeze_count())
"""


def asgi_start(**env: str) -> tuple[int, int]:
    """(database connections kept for the HTTP threads, objects frozen) once a fresh process
    has imported config.asgi against the test database."""
    from tests.pgbouncer import database_env

    kept, frozen_objects = printed(OPENED_AHEAD, **database_env(), WEB_THREADS="3", **env)
    return int(kept), int(frozen_objects)


@pytest.mark.django_db
def test_the_asgi_entry_point_serving_wsgi_opens_its_threads_connections_ahead():
    kept, frozen_objects = asgi_start()
    # One per a2wsgi thread, as config.wsgi does, and the started heap frozen.
    assert kept == 3
    assert frozen_objects > 50_000
    # Django's ASGI handler draws from the psycopg pool: nothing is opened ahead for it.
    assert asgi_start(SEATKEEPER_HTTP="asgi")[0] == 0
    # The control: switched off, no connection is opened ahead.
    assert asgi_start(WEB_WARM_CONNECTIONS="0")[0] == 0
