"""bench/flash_sale.py's fixtures and oversell audit, with *this* checkout's models on the
scratch database (which `recreate_database` makes afresh); other benches use them too."""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def django_setup(database_url: str, redis_url: str, checkout: Path = ROOT) -> None:
    """Django on the scratch database with the *checkout's* models: fixtures and the audit
    must speak the schema the stack migrated (a "before" checkout may predate the engine's
    `Sale`; see `_sale_filter`)."""
    os.environ["DATABASE_URL"] = database_url
    os.environ["REDIS_URL"] = redis_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    if checkout != ROOT:
        sys.path.insert(0, str(checkout))
    import django

    # Celery (imported by the settings package) puts the working directory first on sys.path.
    with contextlib.chdir(checkout):
        django.setup()


def _sale_filter(model, flight) -> dict[str, int]:
    """Filter kwargs for `model`'s rows of one flight: by sale since the engine's `Sale`
    (issue 14), by flight in checkouts before it."""
    field_names = {f.name for f in model._meta.get_fields()}
    if "sale" in field_names:
        return {"sale_id": getattr(flight, "sale_id", getattr(flight, "pk", flight))}
    return {"flight_id": getattr(flight, "pk", flight)}


_counter = {"flight": 0, "users": 0}


def new_flight(code_prefix: str = "FS"):
    from datetime import timedelta

    from django.utils import timezone

    from flights.models import Airport
    from flights.services import create_flight

    fra, _ = Airport.objects.get_or_create(
        code="FRA",
        defaults={
            "name": "Frankfurt",
            "city": "Frankfurt",
            "country": "DE",
            "time_zone": "Europe/Berlin",
        },
    )
    ber, _ = Airport.objects.get_or_create(
        code="BER",
        defaults={
            "name": "Berlin",
            "city": "Berlin",
            "country": "DE",
            "time_zone": "Europe/Berlin",
        },
    )
    _counter["flight"] += 1
    departs = timezone.now() + timedelta(days=30, minutes=_counter["flight"])
    return create_flight(
        code=f"{code_prefix}{_counter['flight']}",
        origin=fra,
        destination=ber,
        departure_at=departs,
        arrival_at=departs + timedelta(hours=1, minutes=10),
    )


def new_customers(count: int) -> list[tuple[int, str]]:
    """`count` fresh customers, each with an API token: [(user id, token)].

    Issued as customers get them, by logging in before the sale opens (`accounts.tokens`:
    the token's user is cached at issue, so a token's first request is a cache hit).  A
    checkout from before that service makes the tokens as it always did (uncached)."""
    from django.contrib.auth import get_user_model

    User = get_user_model()
    start = _counter["users"]
    _counter["users"] += count
    run = uuid.uuid4().hex[:6]
    users = User.objects.bulk_create(
        User(username=f"flash-{run}-{start + i}", password="!") for i in range(count)
    )
    tokens = _issue_tokens(users)
    return [(t.user_id, t.key) for t in tokens]


def _issue_tokens(users: list) -> list:
    try:
        from accounts.tokens import issue_tokens
    except ImportError:  # a checkout before issue 26's token issue
        from rest_framework.authtoken.models import Token

        return Token.objects.bulk_create(Token(user=u, key=Token.generate_key()) for u in users)
    return issue_tokens(users=users)


def audit(flight_id: int) -> tuple[bool, str]:
    from django.db.models import Sum

    from bookings.models import Booking, BookingStatus
    from flights.models import FareInventory
    from flights.services import check_inventory

    by_sale = "sale" in {f.name for f in FareInventory._meta.get_fields()}
    problems = check_inventory(**{"sale_id" if by_sale else "flight_id": flight_id})
    lines = []
    for inv in FareInventory.objects.filter(**_sale_filter(FareInventory, flight_id)).order_by(
        "fare_class"
    ):
        live = (
            Booking.objects.filter(
                **_sale_filter(Booking, flight_id),
                fare_class=inv.fare_class,
                status__in=[BookingStatus.HELD, BookingStatus.CONFIRMED],
            ).aggregate(n=Sum("seat_count"))["n"]
            or 0
        )
        limit = inv.capacity + inv.overbook_limit
        if live > limit:
            problems.append(f"{inv.fare_class}: {live} live units > {limit}")
        lines.append(f"{inv.fare_class} live {live}/{limit}")
    ok = not problems
    return ok, ("OK " if ok else "OVERSOLD/DRIFT ") + ", ".join(lines + problems)


def recreate_database(database_url: str) -> None:
    import psycopg

    name = database_url.rsplit("/", 1)[1]
    assert name.startswith("seatkeeper_bench"), "refusing to recreate a non-scratch database"
    with psycopg.connect(database_url, dbname="postgres", autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", [name]
        )
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
