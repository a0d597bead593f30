from django.core.management.base import BaseCommand

from events.demo import load_event_demo


class Command(BaseCommand):
    help = "Load two demo venues with seating plans and a handful of events (idempotent)."

    def handle(self, *args, **options):
        result = load_event_demo()
        self.stdout.write(
            f"Event demo data: {result.venues} venues, {result.events_total} events "
            f"({result.events_created} new)."
        )
