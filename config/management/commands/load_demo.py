import os

from django.core.management.base import BaseCommand

from events.demo import load_event_demo
from flights.demo import load_demo


class Command(BaseCommand):
    help = (
        "Load demo airports, a month of flights with seat maps, two venues with a handful of "
        "events, a customer and a staff user (idempotent)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=30)

    def handle(self, *args, days, **options):
        # Lives in config, the layer above both catalogues, so one command loads both.
        result = load_demo(days=days, password=os.environ.get("DEMO_PASSWORD") or None)
        self.stdout.write(
            f"Demo data: {result.airports} airports, {result.flights_total} flights "
            f"({result.flights_created} new)."
        )
        events = load_event_demo()
        self.stdout.write(
            f"Event demo data: {events.venues} venues, {events.events_total} events "
            f"({events.events_created} new)."
        )
        for role, username, password in result.credentials:
            self.stdout.write(f"  {role:14} username={username}  password={password}")
