from django.core.management.base import BaseCommand

from kernel.schedules import install_schedules


class Command(BaseCommand):
    help = "Create or update the periodic tasks that celery beat runs (idempotent)."

    def handle(self, *args, **options):
        for name in install_schedules():
            self.stdout.write(f"installed: {name}")
