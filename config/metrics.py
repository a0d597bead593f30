"""Prometheus metrics: what operators watch on sale day (docs/operations.md).

Counters and histograms live in each process (web workers, Celery workers).  With several
processes set PROMETHEUS_MULTIPROC_DIR to a directory shared by all of them on the host,
emptied at deploy: prometheus_client then keeps values in files there and /metrics adds
them up.  Gauges about state (live holds, outbox lag, queue depth) are read from PostgreSQL
and Redis at scrape time by `StateCollector`, so they are right whichever process answers.

The engine does not import this module: it calls `kernel.metrics.count(...)`, and the sink
installed here turns those calls into Prometheus counters.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
from collections.abc import Iterator
from datetime import timedelta

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

from kernel import metrics as kernel_metrics
from kernel.metrics import register_waiting_room
from kernel.web.client_ip import client_ip

logger = logging.getLogger(__name__)
__all__ = ["register_waiting_room"]  # for the waiting room; it lives in the kernel module

HTTP_REQUESTS = Counter(
    "seatkeeper_http_requests",
    "HTTP requests answered, by route pattern, method and status.",
    ["route", "method", "status"],
)
HTTP_LATENCY = Histogram(
    "seatkeeper_http_request_duration_seconds",
    "Time to answer, by route pattern and method.",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
TOO_BUSY = Counter(
    "seatkeeper_too_busy_responses", "503 answers (lock timeout, deadlock: try again).", ["route"]
)
HOLDS = Counter(
    "seatkeeper_holds",
    "Hold attempts by outcome (won/lost) and, when lost, the reason (sold-out, ...).",
    ["outcome", "reason"],
)
SOLD_OUT = Counter("seatkeeper_sold_out_answers", "Holds refused because the class sold out.")
SALES = Counter("seatkeeper_bookings_confirmed", "Bookings confirmed (paid).")
UNITS_SOLD = Counter("seatkeeper_units_sold", "Seats/units sold by confirmed bookings.")
RELAY_FAILURES = Counter(
    "seatkeeper_outbox_relay_failures", "Outbox deliveries where a consumer failed.", ["event_type"]
)
WEBHOOK_FAILURES = Counter(
    "seatkeeper_webhook_delivery_failures",
    "Outgoing partner webhook attempts that failed (non-2xx or unreachable).",
    ["event_type"],
)
WAITING_ROOM_ADMITTED = Counter(
    "seatkeeper_waiting_room_admitted", "People let in from the waiting room.", ["room"]
)

METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}


# Each (route, method, status)'s two series, as `labels()` gives them: it validates, joins and
# takes a lock per call, twice per request (issue 26).  Bounded: routes are URL patterns (never
# raw paths), methods the seven above or "other", statuses what the views answer.
_REQUEST_SERIES: dict[tuple[str, str, int], tuple] = {}


def _request_series(route: str, method: str, status: int) -> tuple:
    key = (route, method, status)
    series = _REQUEST_SERIES.get(key)
    if series is None:
        series = (
            HTTP_REQUESTS.labels(route, method, str(status)),
            HTTP_LATENCY.labels(route, method),
        )
        _REQUEST_SERIES[key] = series
    return series


def observe_request(*, route: str, method: str, status: int, seconds: float) -> None:
    method = method if method in METHODS else "other"
    requests, latency = _request_series(route, method, status)
    requests.inc()
    latency.observe(seconds)
    if status == 503:
        TOO_BUSY.labels(route).inc()


def _sink(name: str, amount: float, labels: dict[str, str]) -> None:
    if name == "holds":
        HOLDS.labels(labels.get("outcome", ""), labels.get("reason", "")).inc(amount)
        if labels.get("reason") == "sold-out":
            SOLD_OUT.inc(amount)
    elif name == "sales":  # one booking confirmed; `amount` is its units
        SALES.inc()
        UNITS_SOLD.inc(amount)
    elif name == "outbox_relay_failures":
        RELAY_FAILURES.labels(labels.get("event_type", "")).inc(amount)
    elif name == "webhook_delivery_failed":
        WEBHOOK_FAILURES.labels(labels.get("event_type", "")).inc(amount)
    elif name == "waiting_room_admitted":
        WAITING_ROOM_ADMITTED.labels(labels.get("room", "")).inc(amount)


def install() -> None:
    """Connect the engine's metric hooks to Prometheus (idempotent; from AppConfig.ready)."""
    kernel_metrics.install_sink(_sink)


# --- state read at scrape time ---------------------------------------------------------------


class StateCollector:
    """Gauges read cheaply from PostgreSQL and Redis when Prometheus scrapes."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        for part in (self._holds, self._outbox, self._webhooks, self._queues, self._sources):
            try:
                yield from part()
            except Exception:
                logger.warning("metrics: %s could not be read", part.__name__, exc_info=True)

    def _holds(self):
        from django.db.models import Sum

        from bookings import catalogue
        from bookings.models import Inventory

        # The label keeps its flight-era name: dashboards select on it.  Every catalogue's
        # sales appear, each named by its catalogue (flights: "CODE#id").
        gauge = GaugeMetricFamily(
            "seatkeeper_live_held_units",
            "Units held (unpaid) right now, per sale (per flight).",
            labels=["flight"],
        )
        rows = list(
            Inventory.objects.filter(held__gt=0)
            .values("sale_id")
            .annotate(units=Sum("held"))
            .order_by("-units")[:500]
        )
        labels = catalogue.metric_labels([row["sale_id"] for row in rows])
        for row in rows:
            gauge.add_metric([labels[row["sale_id"]]], row["units"])
        yield gauge

    def _outbox(self):
        from django.db.models import Count, Min, Q
        from django.utils import timezone

        from kernel.models import OutboxEvent

        stats = OutboxEvent.objects.filter(published_at__isnull=True).aggregate(
            oldest=Min("created_at"),
            backlog=Count("id"),
            failing=Count("id", filter=Q(attempts__gt=0)),
        )
        lag = (timezone.now() - stats["oldest"]).total_seconds() if stats["oldest"] else 0.0
        yield GaugeMetricFamily(
            "seatkeeper_outbox_lag_seconds", "Age of the oldest unrelayed outbox event.", value=lag
        )
        yield GaugeMetricFamily(
            "seatkeeper_outbox_backlog", "Outbox events not yet relayed.", value=stats["backlog"]
        )
        yield GaugeMetricFamily(
            "seatkeeper_outbox_failing_events",
            "Unrelayed outbox events whose consumers failed at least once.",
            value=stats["failing"],
        )

    def _webhooks(self):
        from django.db.models import Count
        from django.utils import timezone

        from partners.models import DeliveryStatus, WebhookDelivery

        gauge = GaugeMetricFamily(
            "seatkeeper_webhook_deliveries",
            "Partner webhook deliveries waiting (PENDING/SENDING) and given up in the last 24 h.",
            labels=["status"],
        )
        counts = {s: 0 for s in (DeliveryStatus.PENDING, DeliveryStatus.SENDING, "FAILED_24H")}
        waiting = (
            WebhookDelivery.objects.filter(
                status__in=[DeliveryStatus.PENDING, DeliveryStatus.SENDING]
            )
            .values("status")
            .annotate(n=Count("id"))
        )
        for row in waiting:
            counts[row["status"]] = row["n"]
        counts["FAILED_24H"] = WebhookDelivery.objects.filter(
            status=DeliveryStatus.FAILED, updated_at__gte=timezone.now() - timedelta(days=1)
        ).count()
        for status, n in counts.items():
            gauge.add_metric([status], n)
        yield gauge

    def _queues(self):
        broker = settings.CELERY_BROKER_URL
        if not broker.startswith(("redis://", "rediss://")):
            return
        import redis

        gauge = GaugeMetricFamily(
            "seatkeeper_celery_queue_length",
            "Messages waiting in a Celery queue.",
            labels=["queue"],
        )
        client = redis.Redis.from_url(broker, socket_timeout=0.5, socket_connect_timeout=0.5)
        try:
            for queue in settings.METRICS["CELERY_QUEUES"]:
                gauge.add_metric([queue], client.llen(queue))
        finally:
            client.close()
        yield gauge

    def _sources(self):
        sources = kernel_metrics.gauge_sources()
        if "waiting_room_length" in sources:
            gauge = GaugeMetricFamily(
                "seatkeeper_waiting_room_length", "People in the waiting room.", labels=["room"]
            )
            for room, n in sources["waiting_room_length"]().items():
                gauge.add_metric([str(room)], n)
            yield gauge
        panels = kernel_metrics.panel_sources()
        if "waiting_room_panel" in panels:
            gauge = GaugeMetricFamily(
                "seatkeeper_waiting_room_panel",
                "The staff panel's figures per open waiting room (waiting, admittedPerMinute, "
                "insideNow, holdsPerMinute, salesPerMinute, unitsLeft, ratePerMinute, "
                "etaGivenSeconds, etaCameTrueSeconds, powBusiestPrefixBits, paused).",
                labels=["room", "figure"],
            )
            for room, figures in panels["waiting_room_panel"]().items():
                for figure, n in figures.items():
                    gauge.add_metric([str(room), figure], n)
            yield gauge


_state_registry = CollectorRegistry(auto_describe=False)
_state_registry.register(StateCollector())


def render() -> bytes:
    """The exposition text: this process's (or all processes') counters, then the state."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    return generate_latest(registry) + generate_latest(_state_registry)


# --- the endpoint --------------------------------------------------------------------------


def _client_allowed(request: HttpRequest, allowed: list[str]) -> bool:
    try:
        address = ipaddress.ip_address(client_ip(request))
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(net, strict=False) for net in allowed)


def _token_ok(request: HttpRequest, token: str) -> bool:
    header = request.headers.get("Authorization", "")
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(
        given.strip().encode(), token.encode()
    )


def metrics_view(request: HttpRequest) -> HttpResponse:
    """GET /metrics.  Off (404) unless METRICS_ENABLED; then it wants the bearer token when
    one is set and a client address in METRICS_ALLOWED_IPS when a list is set.  Enabled with
    neither is served only with DEBUG on."""
    cfg = settings.METRICS
    if not cfg["ENABLED"]:
        raise Http404()
    if not cfg["TOKEN"] and not cfg["ALLOWED_IPS"] and not settings.DEBUG:
        return HttpResponse("metrics need METRICS_TOKEN or METRICS_ALLOWED_IPS\n", status=403)
    if cfg["ALLOWED_IPS"] and not _client_allowed(request, cfg["ALLOWED_IPS"]):
        return HttpResponse("forbidden\n", status=403)
    if cfg["TOKEN"] and not _token_ok(request, cfg["TOKEN"]):
        response = HttpResponse("unauthorized\n", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(render(), content_type=CONTENT_TYPE_LATEST)
