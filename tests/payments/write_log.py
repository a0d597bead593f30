"""A trigger on every table records (transaction, table, sale) of each row written, so writes
made inside SQL functions and bulk statements count too; `mixed_transactions` names the
transactions a Citus cluster distributed by sale would have to run on two nodes.

Every distributed table carries its own sale column (tests/project/test_citus_schema.py),
so the trigger reads the row's sale straight from it."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from django.db import connection

from kernel.sharding import CROSS_NODE_WRITES, TABLES, Distributed

LOG = "citus_write_log"


@dataclass(frozen=True)
class Mixed:
    txid: int
    sales: frozenset[int | None]
    replicated: frozenset[str]  # reference or global tables written beside the sale's rows

    def __str__(self) -> str:
        return f"transaction {self.txid}: sales {sorted(self.sales, key=str)}, " + (
            f"and {sorted(self.replicated)}" if self.replicated else "no other tables"
        )


def _sale_expression(table: str, columns: set[str]) -> str:
    placement = TABLES[table]
    if not isinstance(placement, Distributed):
        return "NULL"
    if placement.column not in columns:
        raise AssertionError(f"{table} has no {placement.column}: the schema test names it")
    return f"r.{placement.column}"


@contextlib.contextmanager
def recording_writes(tables=None) -> Iterator[None]:
    """Install the log and its triggers (on `tables`, default every mapped table), and
    remove them afterwards, whatever happened."""
    tables = sorted(tables or TABLES)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE {LOG} (id bigserial, txid bigint, tbl text, sale_id bigint,"
            " distributed boolean)"
        )
        for table in tables:
            cursor.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0"
                " AND NOT attisdropped",
                [table],
            )
            columns = {row[0] for row in cursor.fetchall()}
            distributed = isinstance(TABLES.get(table), Distributed)
            cursor.execute(
                f"""
                CREATE FUNCTION citus_log_{table}() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE r {table}%ROWTYPE;
                BEGIN
                    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
                    INSERT INTO {LOG} (txid, tbl, sale_id, distributed)
                    VALUES (txid_current(), TG_TABLE_NAME, {_sale_expression(table, columns)},
                            {"true" if distributed else "false"});
                    RETURN NULL;
                END $$;
                CREATE TRIGGER citus_log AFTER INSERT OR UPDATE OR DELETE ON {table}
                FOR EACH ROW EXECUTE FUNCTION citus_log_{table}();
                """
            )
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            for table in tables:
                cursor.execute(f"DROP TRIGGER IF EXISTS citus_log ON {table}")
                cursor.execute(f"DROP FUNCTION IF EXISTS citus_log_{table}()")
            cursor.execute(f"DROP TABLE IF EXISTS {LOG}")


def written_sales() -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT sale_id FROM {LOG} WHERE distributed")
        return {row[0] for row in cursor.fetchall()}


def sales_written_to(table: str) -> set[int | None]:
    """The sale of every row of `table` written while recording (None: of no known sale)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT sale_id FROM {LOG} WHERE tbl = %s", [table])
        return {row[0] for row in cursor.fetchall()}


def mixed_transactions(*, allowed: dict[str, str] = CROSS_NODE_WRITES) -> list[Mixed]:
    """Transactions that wrote rows of two sales (or of an unknown one), or a sale's rows and
    a reference or global table not in `allowed`."""
    sales: dict[int, set[int | None]] = defaultdict(set)
    replicated: dict[int, set[str]] = defaultdict(set)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT txid, tbl, sale_id, distributed FROM {LOG} ORDER BY id")
        for txid, table, sale_id, distributed in cursor.fetchall():
            if distributed:
                sales[txid].add(sale_id)
            elif table not in allowed:
                replicated[txid].add(table)
    return [
        Mixed(txid, frozenset(s), frozenset(replicated[txid]))
        for txid, s in sales.items()
        if len(s) > 1 or None in s or replicated[txid]
    ]
