"""Prepared statements on direct connections only (config/database.py, DB_PREPARE_THRESHOLD):
a direct connection asked for them prepares a statement it repeats; through PgBouncer they
stay off whatever the setting says (PgBouncer 1.18 cannot carry them in transaction mode)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.db import connection
from django.db.backends.postgresql.base import DatabaseWrapper

from config.database import connection_options
from tests.pgbouncer import is_pooled
from tests.project.test_connection_budget import ROOT

pytestmark = pytest.mark.django_db


def options_in_settings(**env: str) -> dict:
    """DATABASES["default"]["OPTIONS"] as config/settings/database.py makes them from this env."""
    code = (
        "import django, os; from django.conf import settings; "
        "print(repr(settings.DATABASES['default']['OPTIONS']))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": "postgres://u@127.0.0.1:5432/seatkeeper",
            **env,
        },
        capture_output=True,
        text=True,
        check=True,
    )
    return eval(out.stdout)  # a dict literal of str, bool, int and None


def test_the_setting_per_connection_kind():
    direct = options_in_settings(DB_PGBOUNCER="false", DB_PREPARE_THRESHOLD="5")
    assert direct["server_side_binding"] is True and direct["prepare_threshold"] == 5
    pooled = options_in_settings(DB_PGBOUNCER="true", DB_PREPARE_THRESHOLD="5")
    assert pooled["prepare_threshold"] is None and "server_side_binding" not in pooled
    unset = options_in_settings(DB_PGBOUNCER="false")
    assert "prepare_threshold" not in unset and "server_side_binding" not in unset


def prepared_after_repeats(options: dict) -> int:
    """Statements the server holds prepared for a connection with `options` after it ran
    one parametrised query ten times."""
    settings_dict = {**connection.settings_dict, "OPTIONS": options}
    wrapper = DatabaseWrapper(settings_dict, alias="prepared-probe")
    try:
        with wrapper.cursor() as cursor:
            for i in range(10):
                cursor.execute("SELECT %s::int + 1", [i])
            cursor.execute("SELECT count(*) FROM pg_prepared_statements")
            return cursor.fetchone()[0]
    finally:
        wrapper.close()


def test_a_direct_connection_asked_for_it_prepares_a_repeated_statement():
    if is_pooled():
        pytest.skip("a direct connection's behaviour; the pooled run's settings are above")
    base = connection_options({**connection.settings_dict}, pgbouncer=False, prepare_threshold=2)[
        "OPTIONS"
    ]
    assert prepared_after_repeats(base) >= 1


def test_control_without_the_setting_nothing_is_prepared():
    if is_pooled():
        pytest.skip("a direct connection's behaviour; the pooled run's settings are above")
    # Django's client-side binding never prepares: the count above is the setting's doing.
    plain = connection_options(
        {**connection.settings_dict}, pgbouncer=False, prepare_threshold=None
    )["OPTIONS"]
    assert prepared_after_repeats(plain) == 0
    pooled = connection_options(
        {**connection.settings_dict, "OPTIONS": {"server_side_binding": True}},
        pgbouncer=True,
        prepare_threshold=2,
    )["OPTIONS"]
    assert prepared_after_repeats(pooled) == 0
