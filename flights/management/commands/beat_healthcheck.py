from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django_celery_beat.models import PeriodicTask


class Command(BaseCommand):
    help = (
        "Exit non-zero unless beat has run an enabled periodic task recently (compose healthcheck)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--within", type=int, default=120, help="seconds")

    def handle(self, *args, within, **options):
        since = timezone.now() - timedelta(seconds=within)
        if not PeriodicTask.objects.filter(enabled=True, last_run_at__gte=since).exists():
            raise CommandError(f"beat has not run any periodic task in the last {within} s")
        self.stdout.write("beat ok")
