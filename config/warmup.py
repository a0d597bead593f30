"""A web process pays its one-time costs when it starts, not in its first customers' requests.

Measured in a fresh process (docs/performance.md, scenario (w)): the first hold took 76 ms
against 25 ms for the next ones.  53 ms of it was Django filling its URL reverse table, which
it does lazily, once per language, on the first `reverse()` (every 201 names its booking in
`Location`), and 20 ms importing and building the channel layer on the first seat-map
announcement.  At an on-sale the first holds of every web process arrive together, each
thread filled the table for itself under one GIL, and the first admitted shoppers' holds took
400-800 ms: the slowest of the whole sale.
"""

from __future__ import annotations

import gc
import os
import sys

from channels.layers import get_channel_layer
from django.conf import settings
from django.urls import reverse
from django.utils import translation


def warm_up() -> None:
    get_channel_layer()
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            reverse("healthz")


def freeze_startup_heap() -> None:
    """Python's cyclic collector, from here on, looks only at what requests allocate.

    A started web process holds ~100 MB of long-lived objects (modules, settings, URL
    tables, models): every full collection walked them all, and each gen-0 collection ran
    after only 700 new container objects, several times per request.  Together that was
    ~6 % of a web process's CPU under scenario (a) (perf, docs/performance.md, "Issue 26:
    the server's share").  `gc.freeze()` moves everything alive now into a generation the
    collector never scans (nothing frozen is freed, and nothing needs to be: it lives as
    long as the process); the collector keeps running for requests' own cycles, after
    WEB_GC_GEN0 (default 7,000) new objects.  Called last, after `warm_up()`.
    WEB_GC_FREEZE=0 turns both off (Python's defaults)."""
    if os.environ.get("WEB_GC_FREEZE", "1") == "0":
        return
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(int(os.environ.get("WEB_GC_GEN0", "7000")), gen1, gen2)


def shorten_gil_switch() -> None:
    """A thread back from a database or Redis round trip waits for the GIL until a busy
    thread gives it up: Python's default is after 5 ms.  1 ms served 1.6x the requests per
    second at 0.6x the CPU per request (docs/performance.md).  Every HTTP server's entry
    point calls it (config/asgi.py, config/wsgi.py)."""
    sys.setswitchinterval(float(os.environ.get("WEB_GIL_SWITCH_MS", "1")) / 1000)
