"""Serve the whole application: ASGI web server, Celery worker and Celery beat.

With REDIS_URL (or CELERY_BROKER_URL) set, this is docker-compose.yml on one machine: uvicorn
with `--workers` web processes (HTTP on WEB_THREADS threads each, one persistent database
connection per thread; see config/asgi.py and docs/performance.md), a Celery worker and
beat, all child processes.  Without, everything runs in this one process: the in-memory
broker and channel layer only reach consumers inside the same process, so the embedded
worker and beat live here as threads.
"""

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import uvicorn
from celery import current_app
from django.conf import settings
from django.core.management.base import BaseCommand

from kernel.ready_banner import announce_when_up, ready_block


class Command(BaseCommand):
    help = "Run web (uvicorn, ASGI, N processes) + Celery worker + beat."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument(
            "--workers",
            type=int,
            default=int(os.environ.get("WEB_CONCURRENCY", "2")),
            help="uvicorn web processes (production mode); about one per core",
        )
        parser.add_argument(
            "--worker-concurrency",
            type=int,
            default=int(os.environ.get("CELERY_CONCURRENCY", "2")),
            help="Celery worker processes (production mode)",
        )
        parser.add_argument(
            "--welcome",
            type=Path,
            default=None,
            help="a file whose lines go into the block printed once the server answers "
            "(./scripts/run: the demo logins)",
        )

    def _announce(self, host: str, port: int, *, embedded: bool, welcome: Path | None) -> None:
        block = ready_block(
            base_url=settings.PUBLIC_BASE_URL.rstrip("/"), embedded=embedded, welcome=welcome
        )

        def write(text: str) -> None:
            self.stdout.write(self.style.SUCCESS(text))
            self.stdout.flush()

        announce_when_up(host=host, port=port, write=write, block=block)

    def handle(self, *args, host, port, workers, worker_concurrency, welcome, **options):
        self._point_urls_at(host, port)
        embedded = settings.CELERY_BROKER_URL.startswith("memory://")
        if not embedded:
            self._announce(host, port, embedded=False, welcome=welcome)
            return self._serve_processes(host, port, workers, worker_concurrency)
        stop_background = self._start_embedded()
        self._announce(host, port, embedded=True, welcome=welcome)
        try:
            uvicorn.run(
                "config.asgi:application", host=host, port=port, lifespan="off", log_level="info"
            )
        finally:
            stop_background()

    def _point_urls_at(self, host: str, port: int) -> None:
        """Links in e-mails and the sandbox gateway's webhooks must reach *this* server, on
        whatever port it was given, unless the environment says otherwise.  Set in the
        environment too, so worker and beat child processes agree."""
        public_host = "127.0.0.1" if host in {"0.0.0.0", "::"} else host
        base = f"http://{public_host}:{port}"
        defaults = {"PUBLIC_BASE_URL": base, "SANDBOX_WEBHOOK_URL": f"{base}/api/payments/webhook"}
        for name, value in defaults.items():
            os.environ.setdefault(name, value)
        settings.PUBLIC_BASE_URL = os.environ["PUBLIC_BASE_URL"]
        settings.PAYMENTS_SANDBOX = {
            **settings.PAYMENTS_SANDBOX,
            "WEBHOOK_URL": os.environ["SANDBOX_WEBHOOK_URL"],
        }

    def _start_embedded(self):
        from celery.beat import EmbeddedService

        # The project's Celery app (config.celery, loaded with the settings package): the
        # kernel finds it as Celery's current app instead of importing the project wiring.
        celery_app = current_app._get_current_object()
        worker = celery_app.WorkController(
            pool="solo",
            concurrency=1,
            loglevel=settings.LOG_LEVEL,
            without_heartbeat=True,
            without_mingle=True,
            without_gossip=True,
            hostname="embedded@seatkeeper",
        )
        threading.Thread(target=worker.start, name="celery-worker", daemon=True).start()
        # Service defaults to the shelve-file scheduler; ours keeps its schedule in the database.
        beat = EmbeddedService(
            celery_app, thread=True, scheduler_cls=celery_app.conf.beat_scheduler
        )
        beat.start()

        def stop():
            beat.stop()
            worker.stop(in_sighandler=False)

        return stop

    def _serve_processes(self, host: str, port: int, workers: int, concurrency: int) -> None:
        """The compose services as child processes; stops them all when one ends or on ^C."""
        celery = [sys.executable, "-m", "celery", "-A", "config"]
        web = [sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", host]
        web += ["--port", str(port), "--workers", str(max(1, workers)), "--no-access-log"]
        level = settings.LOG_LEVEL  # ./scripts/run: WARNING, so the ready block stays in view
        # Celery processes run one task at a time: one persistent connection each.
        env = {**os.environ, "DB_CONN_MAX_AGE": os.environ.get("DB_CONN_MAX_AGE", "60")}
        children = [
            subprocess.Popen(web),
            subprocess.Popen(
                [*celery, "worker", f"--loglevel={level}", f"--concurrency={concurrency}"], env=env
            ),
            subprocess.Popen([*celery, "beat", f"--loglevel={level}"], env=env),
        ]
        stopping = threading.Event()
        # ^C or a supervisor's SIGTERM: stop the children too, never orphan them.
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stopping.set())
        try:
            while not stopping.is_set() and all(child.poll() is None for child in children):
                stopping.wait(0.5)
        finally:
            for child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)
            for child in children:
                try:
                    child.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    child.kill()
