"""`manage.py consume_event_log`: run the check-in sync against the event log."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from checkin_sync.consumer import DURABLE, open_reader, replay_from_start, sync_from_log


class Command(BaseCommand):
    help = "Mirror bookings' passengers and seats from the event log (docs/event-log.md)."

    def add_arguments(self, parser):
        parser.add_argument("--durable", default=DURABLE, help="the stored offset's name")
        parser.add_argument(
            "--replay", action="store_true", help="forget the offset and rebuild from offset 0"
        )
        parser.add_argument(
            "--idle-exit",
            type=float,
            default=None,
            help="exit after this many seconds without a message (default: run forever)",
        )

    def handle(self, *args, durable: str, replay: bool, idle_exit: float | None, **options):
        if not settings.EVENT_LOG["URL"]:
            raise CommandError("EVENT_LOG_URL is not set: there is no event log to read.")
        if replay:
            replay_from_start(durable=durable)
        reader = open_reader(durable=durable)
        try:
            while True:
                report = sync_from_log(reader, idle_seconds=idle_exit or 60.0)
                self.stdout.write(
                    f"delivered {report.delivered}, applied {report.applied}, "
                    f"duplicates {report.duplicates}, retried {report.retried}"
                )
                if idle_exit is not None:
                    return
        finally:
            reader.close()
