"""The availability counter's upkeep (bookings.availability, "Availability counter"): its
name per inventory class, seeding and rebuilding it from PostgreSQL, reading it, and giving
units back when a hold ends.  The hold's own take from it is `bookings.availability`'s
`hold_admission`.

It runs on the filters' one Redis connection and backoff, which live in
bookings.availability; that module re-exports these names, so callers keep writing
`availability.give_back(...)`."""

from __future__ import annotations

import redis
from django.db.models import F

from bookings import availability_scripts as scripts
from bookings import booking_classes, catalogue
from bookings.models import BookingClass, Inventory


def counter_name(fare_class: str, booking_class: str = "") -> str:
    """The counter of a fare class ("ECONOMY") or of a booking class nested in it
    ("ECONOMY/LAUNCH", docs/fare-classes.md), whose `n` is what that class can still sell."""
    return f"{fare_class}/{booking_class}" if booking_class else fare_class


def _available_in_db(sale_id: int, fare_class: str) -> int | None:
    if "/" in fare_class:  # a booking class: the smallest room along its chain
        cabin, code = fare_class.split("/", 1)
        choices = booking_classes.fare_choices(sale_id=sale_id, fare_class=cabin)
        return next((c.left for c in choices if c.code == code), None)
    row = (
        Inventory.objects.filter(sale_id=sale_id, fare_class=fare_class)
        .annotate(left=F("capacity") + F("overbook_limit") - F("sold") - F("held"))
        .values_list("left", flat=True)
        .first()
    )
    return None if row is None else max(row, 0)


def rebuild_class_counters(*, sale_id: int, fare_class: str) -> None:
    """Reseed the counters of every booking class of a fare class (staff changed a limit)."""
    if counter_enabled():
        for choice in booking_classes.fare_choices(sale_id=sale_id, fare_class=fare_class):
            if choice.code:
                seed_counter(
                    sale_id=sale_id,
                    fare_class=counter_name(fare_class, choice.code),
                    available=choice.left,
                )


def seed_counter(*, sale_id: int, fare_class: str, available: int, overwrite: bool = True) -> None:
    """Set the counter to `available` (a figure just read from, or written to, PostgreSQL)."""
    if counter_enabled():
        _run(
            scripts.SEED,
            [counter_key(sale_id, fare_class)],
            [available, _now_ms(), COUNTER_KEY_TTL_SECONDS, int(overwrite)],
        )


def rebuild_counter(*, sale_id: int, fare_class: str, overwrite: bool = True) -> int | None:
    """Read units left from PostgreSQL and store them; returns them (None: no such fare)."""
    available = _available_in_db(sale_id, fare_class)
    if available is not None:
        seed_counter(
            sale_id=sale_id, fare_class=fare_class, available=available, overwrite=overwrite
        )
    return available


def rebuild_open_counters() -> int:
    """Beat: rebuild every counter of a sale still open from PostgreSQL, in one read and
    one pipeline.  Corrects any drift (lost give-backs, waitlist offers, crashed workers)."""
    if not counter_enabled():
        return 0
    from django.utils import timezone

    rows = list(
        Inventory.objects.filter(catalogue.open_sales_q(now=timezone.now(), prefix="sale__"))
        .annotate(left=F("capacity") + F("overbook_limit") - F("sold") - F("held"))
        .values_list("sale_id", "fare_class", "left")
    )
    rows += booking_classes.open_class_counters(
        open_q=catalogue.open_sales_q(now=timezone.now(), prefix="sale__")
    )
    client = _client()
    if client is None or not rows:
        return 0
    now = _now_ms()
    try:
        pipe = client.pipeline(transaction=False)
        for sale_id, fare_class, left in rows:
            key = counter_key(sale_id, fare_class)
            pipe.hset(key, mapping={"n": max(left, 0), "at": now, "pending": 0})
            pipe.expire(key, COUNTER_KEY_TTL_SECONDS)
        pipe.execute()
    except redis.RedisError as exc:
        _redis_failed(exc)
        return 0
    return len(rows)


def counter_value(*, sale_id: int, fare_class: str) -> int | None:
    """Units left per the counter (None: missing or Redis unreachable) — for audits and tests."""
    client = _client()
    if client is None:
        return None
    try:
        value = client.hget(counter_key(sale_id, fare_class), "n")
    except redis.RedisError as exc:
        _redis_failed(exc)
        return None
    return None if value is None else int(value)


def give_back(*, sale_id: int, fare_class: str, units: int) -> None:
    """Units returned to the fare class (a cancel, an expiry, an unblocked seat).

    Inside the releasing transaction, for the same reason as `release_seats`: a counter that
    is briefly too high only sends a request to PostgreSQL.  Every booking class of the fare
    class gets them back too, whichever class they came from: units of any class may widen
    what a nested class can sell, and erring high is harmless."""
    if units > 0 and counter_enabled():
        _settle(sale_id, fare_class, units, give=True)
        codes = BookingClass.objects.filter(sale_id=sale_id, fare_class=fare_class).values_list(
            "code", flat=True
        )
        for code in codes:
            _settle(sale_id, counter_name(fare_class, code), units, give=True)


def _settle(
    sale_id: int,
    fare_class: str,
    units: int,
    *,
    give: bool = False,
    pending: bool = False,
    take: bool = False,
) -> None:
    _run(
        scripts.SETTLE,
        [counter_key(sale_id, fare_class)],
        [units, int(give), int(pending), int(take)],
    )


# The filters' one Redis connection and backoff, imported last (as bookings.availability
# imports this module last), so either module may be imported first.
from bookings.availability import (  # noqa: E402
    COUNTER_KEY_TTL_SECONDS,
    _client,
    _now_ms,
    _redis_failed,
    _run,
    counter_enabled,
    counter_key,
)
