from django.core.management.base import BaseCommand, CommandError

from flights.selectors import sale_id_of_flight
from flights.services import check_inventory


class Command(BaseCommand):
    help = "Verify fare inventory counters against seat, booking and passenger rows."

    def add_arguments(self, parser):
        parser.add_argument("--flight", type=int, help="Only this flight id.")

    def handle(self, *args, flight=None, **options):
        problems = check_inventory(
            sale_id=None if flight is None else sale_id_of_flight(flight) or 0
        )
        for problem in problems:
            self.stdout.write(self.style.ERROR(problem))
        if problems:
            raise CommandError(f"{len(problems)} inventory problem(s) found.")
        self.stdout.write(self.style.SUCCESS("Inventory clean."))
