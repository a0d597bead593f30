"""The migrated schema against kernel.sharding's map: what Citus needs to distribute it by sale.

The check reads pg_catalog (tests/project/citus_catalog.py).  `OPEN_BREAKS` is the list of
rules the schema still breaks, each a decision not yet carried out (docs/performance.md,
"Beyond one primary"); it only shrinks: the test fails on a new break and on a fixed one
still listed."""

from __future__ import annotations

import pytest
from django.db import connection

from kernel.sharding import TABLES, Distributed
from tests.project.citus_catalog import Break, breaks

pytestmark = pytest.mark.django_db

OPEN_BREAKS: set[Break] = set()


def test_every_table_is_placed_and_the_distributed_ones_keep_citus_rules():
    with connection.cursor() as cursor:
        found = breaks(cursor, TABLES)
    new = sorted(str(b) for b in found - OPEN_BREAKS)
    fixed = sorted(str(b) for b in OPEN_BREAKS - found)
    assert not new, "the schema breaks Citus's rules:\n" + "\n".join(new)
    assert not fixed, "fixed, so take them off OPEN_BREAKS:\n" + "\n".join(fixed)
