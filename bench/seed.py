"""Seed a throw-away database for a fault bench: one flight, N customers with API tokens.

    DATABASE_URL=... python bench/seed.py --clients 100 --rows 100
Prints one JSON line: {"flightId": ..., "tokens": [...], "seats": [...]}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--rows", type=int, default=100, help="economy rows of 6 seats")
    parser.add_argument("--email", action="store_true", help="give customers e-mail addresses")
    args = parser.parse_args()

    import django

    django.setup()
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from flights.models import Airport, Seat
    from flights.services import create_flight
    from tests.factories import economy_only_layout

    origin, _ = Airport.objects.get_or_create(
        code="SGN",
        defaults={
            "name": "SGN",
            "city": "Saigon",
            "country": "VN",
            "time_zone": "Asia/Ho_Chi_Minh",
        },
    )
    destination, _ = Airport.objects.get_or_create(
        code="HAN",
        defaults={"name": "HAN", "city": "Hanoi", "country": "VN", "time_zone": "Asia/Ho_Chi_Minh"},
    )
    departure = timezone.now() + timedelta(days=20)
    flight = create_flight(
        code=f"SK{Airport.objects.count()}{os.getpid() % 1000}",
        origin=origin,
        destination=destination,
        departure_at=departure,
        arrival_at=departure + timedelta(hours=2),
        layout=economy_only_layout(rows=args.rows),
    )
    User = get_user_model()
    tokens = []
    for index in range(args.clients):
        user = User(
            username=f"bench-{flight.pk}-{index}",
            email=f"bench-{flight.pk}-{index}@example.com" if args.email else "",
        )
        user.set_unusable_password()
        user.save()
        tokens.append(Token.objects.create(user=user).key)
    seats = list(Seat.objects.filter(sale=flight.sale).values_list("seat_no", flat=True))
    print(json.dumps({"flightId": flight.pk, "tokens": tokens, "seats": seats}))


if __name__ == "__main__":
    main()
