"""Kernel-level metric hooks: the engine counts what happens without knowing who listens.

`count("holds", outcome="won")` is a no-op until a sink is installed; config.metrics installs
the Prometheus one at startup.  A sink that raises never breaks the caller.  Nothing here
imports a metrics library, so the engine stays free of it.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

logger = logging.getLogger(__name__)
Sink = Callable[[str, float, dict[str, str]], None]
_sinks: list[Sink] = []
F = TypeVar("F", bound=Callable[..., Any])


def install_sink(sink: Sink) -> None:
    if sink not in _sinks:
        _sinks.append(sink)


def remove_sink(sink: Sink) -> None:
    if sink in _sinks:
        _sinks.remove(sink)


def count(name: str, amount: float = 1, **labels: str) -> None:
    for sink in list(_sinks):
        try:
            sink(name, amount, labels)
        except Exception:
            logger.debug("metric sink failed on %s", name, exc_info=True)


def counts_holds(function: F) -> F:
    """Count a hold service's outcome: won, or lost with the domain error's code
    (`sold-out`, `seat-unavailable`, `too-busy`, ...)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            result = function(*args, **kwargs)
        except Exception as exc:
            reason = getattr(exc, "code", "error")
            count("holds", outcome="lost", reason=reason)
            _count_hold_time(started, kwargs, reason)
            raise
        count("holds", outcome="won", reason="")
        _count_hold_time(started, kwargs, "")
        return result

    return wrapper  # type: ignore[return-value]


def _count_hold_time(started: float, kwargs: dict[str, Any], reason: str) -> None:
    # The hold's time per sale: the waiting room's adaptive admission listens
    # (waitroom/origin_health.py, "hold_seconds").
    sale = str(kwargs.get("sale_id") or "")
    count("hold_seconds", time.monotonic() - started, sale=sale, reason=reason)


# --- gauges read at scrape time ---------------------------------------------------------------
# name -> a function returning {label value: number}; config.metrics reads them on scrape.
GaugeSource = Callable[[], dict[str, float]]
_gauge_sources: dict[str, GaugeSource] = {}


PanelSource = Callable[[], dict[str, dict[str, float]]]
_panel_sources: dict[str, PanelSource] = {}


def register_waiting_room(*, length: GaugeSource, panel: PanelSource | None = None) -> None:
    """For the waiting room: `length()` returns {room: people waiting}; `panel()` returns
    {room: {figure: number}}, the staff panel's figures.  Admissions are counted with
    `count("waiting_room_admitted", n, room=...)`."""
    _gauge_sources["waiting_room_length"] = length
    if panel is not None:
        _panel_sources["waiting_room_panel"] = panel


def panel_sources() -> dict[str, PanelSource]:
    return dict(_panel_sources)


def gauge_sources() -> dict[str, GaugeSource]:
    return dict(_gauge_sources)
