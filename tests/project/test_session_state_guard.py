"""No session state in the application's SQL: through PgBouncer in transaction mode a session
is shared by whichever clients the pooler hands it to (tests/project/test_pgbouncer.py shows
each of these leaking or breaking).  A guard over every module of ours, with a control that
shows it catching each kind."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The application: what runs in web, ws, worker and beat (and migrate).  The benches and the
# test runner speak to their own PostgreSQL directly; tests/ has the controls on purpose.
SKIPPED = {".venv", "tests", "bench", "scripts", "node_modules", "static", "var"}
# The one module that names the rules (and takes `server_side_binding` out of the options).
RULES = Path("config/database.py")

FORBIDDEN = {
    "LISTEN/NOTIFY": re.compile(r"\b(LISTEN|UNLISTEN|NOTIFY)\s+\w|pg_notify\s*\(", re.I),
    "session advisory lock": re.compile(r"pg_(try_)?advisory_(un)?lock(_shared|_all)?\s*\(", re.I),
    "session-level set_config": re.compile(r"set_config\s*\([^)]*,\s*false\s*\)", re.I),
    # SQL keywords are upper case here (which keeps "Set the counter" out).
    # (SET NULL / SET DEFAULT are foreign-key actions, as in kernel/citus_cutover.py's DDL.)
    "session-level SET": re.compile(
        r"[\"']\s*(SET|RESET)\s+(SESSION\s+)?"
        r"(?!LOCAL\b|CONSTRAINTS\b|TRANSACTION\b|NULL\b|DEFAULT\b)\w+"
    ),
    "server-side cursor": re.compile(r"\bDECLARE\s+\w+\s+.*CURSOR\b|\bWITH\s+HOLD\b", re.I),
    "prepared statement": re.compile(r"[\"']\s*(PREPARE|DEALLOCATE)\s+\w+|server_side_binding"),
    "temporary table": re.compile(r"\bCREATE\s+TEMP(ORARY)?\s+TABLE\b", re.I),
}


def violations(text: str) -> list[str]:
    return [kind for kind, pattern in FORBIDDEN.items() if pattern.search(text)]


def application_modules(root: Path = ROOT) -> list[Path]:
    return [
        path
        for path in sorted(root.rglob("*.py"))
        if not SKIPPED & set(path.relative_to(root).parts) and path.relative_to(root) != RULES
    ]


def scan(root: Path = ROOT) -> dict[str, list[str]]:
    found = {}
    for path in application_modules(root):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if kinds := violations(line):
                found[f"{path.relative_to(root)}:{number}"] = kinds
    return found


def test_the_application_keeps_no_state_in_a_database_session():
    assert len(application_modules()) > 100  # the guard reads the real tree
    assert scan() == {}


@pytest.mark.parametrize(
    "line, kind",
    [
        ('cursor.execute("LISTEN seat_changes")', "LISTEN/NOTIFY"),
        ("cursor.execute(\"SELECT pg_notify('seats', %s)\", [x])", "LISTEN/NOTIFY"),
        ('cursor.execute("SELECT pg_advisory_lock(%s)", [key])', "session advisory lock"),
        ('cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])', "session advisory lock"),
        ('cursor.execute("SELECT pg_advisory_unlock_all()")', "session advisory lock"),
        (
            "cursor.execute(\"SELECT set_config('lock_timeout', %s, false)\", [t])",
            "session-level set_config",
        ),
        ("cursor.execute(\"SET lock_timeout = '1s'\")", "session-level SET"),
        ('cursor.execute("SET SESSION statement_timeout TO 5")', "session-level SET"),
        ('cursor.execute("RESET lock_timeout")', "session-level SET"),
        ('cursor.execute("DECLARE c CURSOR WITH HOLD FOR SELECT 1")', "server-side cursor"),
        ('cursor.execute("PREPARE seats AS SELECT 1")', "prepared statement"),
        ('OPTIONS = {"server_side_binding": True}', "prepared statement"),
        ('cursor.execute("CREATE TEMP TABLE picks (id int)")', "temporary table"),
    ],
)
def test_control_the_guard_catches_each_kind(line, kind):
    assert violations(line) == [kind]


@pytest.mark.parametrize(
    "line",
    [
        'cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])',
        'cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [key])',
        "cursor.execute(\"SELECT set_config('synchronous_commit', 'off', true)\")",
        "cursor.execute(\"SET LOCAL lock_timeout = '2s'\")",
        'cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")',
        "f\"ALTER ROLE CURRENT_USER IN DATABASE {db} SET lock_timeout = '{ms}ms'\"",
        "# a listener of the seat map set up at start",
    ],
)
def test_what_stays_inside_a_transaction_is_allowed(line):
    assert violations(line) == []


def test_control_a_module_with_a_session_lock_is_found(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "locks.py").write_text(
        'def take(cursor, key):\n    cursor.execute("SELECT pg_advisory_lock(%s)", [key])\n'
    )
    (tmp_path / "tests").mkdir()  # controls like this very file are not the application
    (tmp_path / "tests" / "test_x.py").write_text('SQL = "LISTEN x"\n')
    assert scan(tmp_path) == {"app/locks.py:2": ["session advisory lock"]}
