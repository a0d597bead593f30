"""The one-statement hold on PostgreSQL against the Python path on SQLite, the embedded mode's
database: the same random sequences of seatless holds, waits, expiries, cancels and the sale
closing (tests/bookings/test_one_statement_hold.py's steps) are played through the function
here and through `manage.py shell` on a fresh SQLite database, and every answer and row must
match.  The sequences come from a seeded generator, not hypothesis: the SQLite side runs them
all in one process."""

from __future__ import annotations

import json
import random
from datetime import datetime

import pytest
from django.db import connection
from django.utils import timezone

from tests.bookings.test_one_statement_hold import (
    BOOKING_CLASSES,
    CUSTOMERS,
    FARE_CLASSES,
    _cap_off_by_one,
    customers,
    run,
)
from tests.project.test_embedded_run import embedded_env, manage

pytestmark = pytest.mark.django_db

ON_SQLITE = """
import json
from datetime import datetime
from django.db import connection
from tests.bookings.test_one_statement_hold import customers, run
from tests.bookings.test_one_statement_hold_sqlite import as_json, sequences

class Patch:  # what `run` asks of pytest's monkeypatch
    def setattr(self, target, name, value):
        setattr(target, name, value)

people = customers()
start = datetime.fromisoformat(START)
played = [as_json(run(ops, one_statement=True, people=people, start=start, monkeypatch=Patch()))
          for ops in sequences()]
print(json.dumps({"vendor": connection.vendor, "played": played}))
"""


def sequences(count: int = 40, seed: int = 26) -> list[list[tuple]]:
    """`count` sequences of up to 25 steps, drawn like the property's (same weights)."""
    pick = random.Random(seed)
    steps = []
    for _ in range(count):
        ops = []
        for _ in range(pick.randint(1, 25)):
            kind = pick.choice(["hold", "hold", "hold", "wait", "expire", "cancel", "close"])
            if kind == "hold":
                ops.append(
                    (
                        "hold",
                        pick.choice([0, 0, 0, 1, CUSTOMERS - 1]),
                        pick.choice(["ECONOMY", "ECONOMY", "ECONOMY", *FARE_CLASSES[1:]]),
                        pick.choice(BOOKING_CLASSES),
                        pick.randint(1, 4),
                        pick.random() < 0.5,
                    )
                )
            elif kind == "wait":
                ops.append(("wait", pick.randint(1, 12)))
            elif kind == "cancel":
                ops.append(("cancel", pick.randint(0, 30)))
            else:
                ops.append((kind,))
        steps.append(ops)
    return steps


def as_json(played) -> object:
    """Answers and rows as JSON (Decimals, times and enums as their text)."""
    return json.loads(json.dumps(played, default=str))


@pytest.fixture(scope="module")
def on_sqlite(tmp_path_factory) -> tuple[datetime, list]:
    """The sequences played on a fresh SQLite database (one process for all of them)."""
    start = timezone.now().replace(microsecond=0)
    env = embedded_env(tmp_path_factory.mktemp("embedded") / "embedded.sqlite3")
    manage(env, "migrate", "--noinput")
    script = ON_SQLITE.replace("START", repr(start.isoformat()))
    out = json.loads(manage(env, "shell", "-c", script).strip().splitlines()[-1])
    assert out["vendor"] == "sqlite"
    return start, out["played"]


def mismatches(on_sqlite, monkeypatch) -> list[list[tuple]]:
    """The sequences whose answers or rows differ between the function here and SQLite."""
    start, played = on_sqlite
    people = customers()
    differ = []
    for ops, there in zip(sequences(), played, strict=True):
        here = as_json(
            run(ops, one_statement=True, people=people, start=start, monkeypatch=monkeypatch)
        )
        if here != there:
            differ.append(ops)
    return differ


def test_the_function_on_postgresql_holds_as_the_python_path_on_sqlite(on_sqlite, monkeypatch):
    assert connection.vendor == "postgresql"
    assert mismatches(on_sqlite, monkeypatch) == []
    # The sequences reached more than wins: refusals of several kinds were compared.
    answers = [a for one in on_sqlite[1] for a in one[0]]
    refusals = {a for a in answers if isinstance(a, str)}
    assert {"HoldLimitReached", "SoldOut", "SaleClosed"} <= refusals, refusals


def test_control_a_cap_off_by_one_differs_from_sqlite(on_sqlite, monkeypatch):
    _cap_off_by_one()
    assert mismatches(on_sqlite, monkeypatch) != []
