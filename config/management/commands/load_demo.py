import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from accounts.services import record_verified_email
from events.demo import load_event_demo
from flights.demo import load_demo


def demo_password() -> str:
    """DEMO_PASSWORD, or the one drawn on the first run and kept in var/demo-password
    (DEMO_PASSWORD_FILE), so the logins stay the same from one run to the next."""
    if os.environ.get("DEMO_PASSWORD"):
        return os.environ["DEMO_PASSWORD"]
    path = Path(os.environ.get("DEMO_PASSWORD_FILE") or settings.VAR_DIR / "demo-password")
    if path.exists() and path.read_text().strip():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    password = secrets.token_urlsafe(9)
    path.touch(mode=0o600)
    path.write_text(password + "\n")
    return password


class Command(BaseCommand):
    help = (
        "Load demo airports, a month of flights with seat maps, two venues with a handful of "
        "events, a customer and a staff user (idempotent; their password stays the same)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=30)
        parser.add_argument(
            "--logins-file",
            type=Path,
            default=None,
            help="also write the two demo logins there (./scripts/run hands it to serve)",
        )

    def handle(self, *args, days, logins_file, verbosity, **options):
        # Lives in config, the layer above both catalogues, so one command loads both.
        result = load_demo(days=days, password=demo_password())
        events = load_event_demo()
        # The demo customer can queue for sales that let in verified addresses only.
        record_verified_email(user=get_user_model().objects.get(username="demo"))
        if logins_file is not None:
            self._write(logins_file, result.credentials)
        if verbosity < 1:
            return
        self.stdout.write(
            f"Demo data: {result.airports} airports, {result.flights_total} flights "
            f"({result.flights_created} new), {events.venues} venues, {events.events_total} "
            f"events ({events.events_created} new)."
        )
        for line in login_lines(result.credentials):
            self.stdout.write(f"  {line}")

    def _write(self, path: Path, credentials) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(login_lines(credentials)) + "\n")


def login_lines(credentials) -> list[str]:
    width = max(len(role) for role, _user, _password in credentials)
    return [
        f"{role:{width}}  username={username}  password={password}"
        for role, username, password in credentials
    ]
