"""Read the migrated schema from pg_catalog and name every break of Citus's rules.

Django cannot model composite primary keys with foreign keys pointing at them, so the
models say nothing reliable here: only the catalogue of the migrated database does."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kernel.sharding import GLOBAL, REFERENCE, Distributed, Placement

_TABLES = """
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
"""
_NOT_NULL = """
SELECT c.relname, a.attname, a.attnotnull FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND a.attnum > 0 AND NOT a.attisdropped
"""
# Primary keys, unique constraints and unique indexes (partial and expression ones too: an
# expression column shows as attnum 0 and never counts as the distribution column).
_UNIQUE = """
SELECT t.relname, i.relname, ix.indisprimary,
       ARRAY(SELECT a.attname FROM unnest(ix.indkey) k
             JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k)
FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = current_schema() AND ix.indisunique
"""
_FOREIGN = """
SELECT c.relname, con.conname, f.relname,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o),
       ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o)
FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_class f ON f.oid = con.confrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND con.contype = 'f'
"""


@dataclass(frozen=True, order=True)
class Break:
    table: str
    rule: str

    def __str__(self) -> str:
        return f"{self.table}: {self.rule}"


def breaks(cursor, tables: Mapping[str, Placement]) -> set[Break]:
    """Every way the schema the cursor sees breaks `tables`' placements."""
    found: set[Break] = set()
    cursor.execute(_TABLES)
    present = {row[0] for row in cursor.fetchall()}
    for table in sorted(present - tables.keys()):
        found.add(Break(table, "not in kernel.sharding.TABLES"))
    for table in sorted(tables.keys() - present):
        found.add(Break(table, "in kernel.sharding.TABLES but not in the schema"))

    def column(table: str) -> str | None:
        placement = tables.get(table)
        return placement.column if isinstance(placement, Distributed) else None

    cursor.execute(_NOT_NULL)
    not_null = {(t, a): nn for t, a, nn in cursor.fetchall()}
    for table in sorted(present):
        col = column(table)
        if col is None:
            continue
        if (table, col) not in not_null:
            found.add(Break(table, f"has no {col} column"))
        elif not not_null[(table, col)]:
            found.add(Break(table, f"{col} may be NULL"))

    cursor.execute(_UNIQUE)
    primary = set()
    for table, index, is_primary, cols in cursor.fetchall():
        col = column(table)
        if is_primary:
            primary.add(table)
        if col is not None and col not in cols:
            what = "primary key" if is_primary else f"unique {index}"
            found.add(Break(table, f"{what} ({', '.join(cols) or 'expression'}) lacks {col}"))
    for table in sorted(present & tables.keys()):
        if column(table) is not None and table not in primary:
            found.add(Break(table, "has no primary key"))

    cursor.execute(_FOREIGN)
    for table, _name, target, cols, target_cols in cursor.fetchall():
        if table not in tables or target not in tables:
            continue
        col, target_col = column(table), column(target)
        if target_col is not None and col is None:
            kind = "reference" if tables[table] is REFERENCE else "global"
            rule = f"{kind} table's foreign key ({', '.join(cols)}) to distributed {target}"
            found.add(Break(table, rule))
        elif target_col is not None:
            pairs = list(zip(cols, target_cols, strict=True))
            if (col, target_col) not in pairs:
                found.add(Break(table, f"foreign key ({', '.join(cols)}) to {target} lacks {col}"))
        elif col is not None and tables[target] is GLOBAL:
            found.add(Break(table, f"foreign key ({', '.join(cols)}) to global {target}"))
    return found
