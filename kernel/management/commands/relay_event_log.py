"""`manage.py relay_event_log`: a dedicated event-log relay process (instead of, or beside,
the Celery task beat sends every second; the lease lets one of them publish at a time)."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from kernel.eventlog import event_log_enabled
from kernel.eventlog.publisher import close_publishers
from kernel.eventlog.relay import relay_event_log


class Command(BaseCommand):
    help = "Publish outbox events to the event log until stopped (docs/event-log.md)."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="until nothing is left, then exit")
        parser.add_argument("--poll", type=float, default=0.2, help="seconds between empty polls")

    def handle(self, *args, once: bool, poll: float, **options):
        if not event_log_enabled():
            raise CommandError("EVENT_LOG_URL is not set: there is no event log to publish to.")
        try:
            while True:
                report = relay_event_log()
                if report.logged:
                    self.stdout.write(f"logged {report.logged} ({report.duplicates} duplicates)")
                if report.error:
                    self.stderr.write(f"event log: {report.error}")
                if report.read == 0 or report.error or not report.leased:
                    if once:
                        return
                    time.sleep(poll)
        finally:
            close_publishers()
