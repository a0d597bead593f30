"""The keys a Citus cut-over adds, generated from the migrated schema and kernel.sharding.

Django cannot model a composite primary key that other tables' foreign keys point at, so the
Django schema keeps `id` as every table's key and the cut-over rewrites them, in the order
below, before `create_distributed_table` (docs/performance.md, "Beyond one primary"):

1. each distributed table's primary key becomes (id, <distribution column>);
2. each foreign key from a distributed table to another gains both tables' distribution
   columns, (booking_id, sale_id) -> bookings_booking (id, sale_id): it then also proves that
   a row and its parent are of the same sale.  An ON DELETE SET NULL key names its own
   columns (`SET NULL (event_id)`, PostgreSQL 15), so a deleted parent never nulls the sale;
3. each unique constraint or index on exactly the columns of a foreign key widened in step 2
   (a OneToOne such as a ticket's passenger, or "one active listing per booking") gains the
   row's distribution column: the widened key proves the row's sale is its parent's, so
   (passenger_id, sale_id) allows exactly what (passenger_id) did;
4. the foreign keys of `kernel.sharding.UNCHECKED_LINKS` (a reference table's link to a
   sale, which Citus cannot keep) are dropped, each for the reason given there.

Both are safe on today's data: ids come from sequences, and a foreign key's sale column is
a copy of its parent's.  The ORM keeps addressing rows by `id` (still unique in practice);
under Citus a query by `id` alone is routed to every shard, so the hot paths filter by sale.
Every other unique constraint is left alone: widening one of those changes a rule, and each
is decided in kernel/sharding.py and the migrations.
"""

from __future__ import annotations

from collections.abc import Mapping

from kernel.sharding import UNCHECKED_LINKS, Distributed, Placement

_PRIMARY = """
SELECT t.relname, con.conname,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o)
FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = current_schema() AND con.contype = 'p'
"""
_FOREIGN = """
SELECT c.relname, con.conname, f.relname, con.confdeltype, con.condeferrable,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o),
       ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o)
FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_class f ON f.oid = con.confrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND con.contype = 'f'
"""
_COLUMNS = """
SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND a.attnum > 0 AND NOT a.attisdropped
"""
# Unique indexes (with their constraint, if any, and partial predicate) on plain columns,
# except those a foreign key points at.
_UNIQUE = """
SELECT t.relname, i.relname, con.conname, pg_get_expr(ix.indpred, ix.indrelid),
       ARRAY(SELECT a.attname FROM unnest(ix.indkey) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.n ORDER BY k.o)
FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
LEFT JOIN pg_constraint con ON con.conindid = ix.indexrelid AND con.contype = 'u'
WHERE n.nspname = current_schema() AND ix.indisunique AND NOT ix.indisprimary
  AND 0 <> ALL (ix.indkey) AND ix.indexprs IS NULL
  AND NOT EXISTS (SELECT 1 FROM pg_constraint f WHERE f.contype = 'f' AND f.conindid = i.oid)
"""
_ON_DELETE = {"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL"}


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _cols(names) -> str:
    return ", ".join(_q(n) for n in names)


def composite_keys_sql(cursor, tables: Mapping[str, Placement]) -> list[str]:
    """The statements of steps 1 and 2 for the schema `cursor` sees.  A table that lacks its
    distribution column is left alone, and so is a foreign key of its (kernel.sharding's
    check lists both); a foreign key from it to a table whose key changes is pointed at a
    kept single-column UNIQUE, which that check lists too, so nothing is dropped unseen."""
    column = {t: p.column for t, p in tables.items() if isinstance(p, Distributed)}
    cursor.execute(_COLUMNS)
    present = set(cursor.fetchall())
    ready = {t for t, c in column.items() if (t, c) in present}
    cursor.execute(_PRIMARY)
    rekeyed = {
        table: (name, cols)
        for table, name, cols in cursor.fetchall()
        if table in ready and column[table] not in cols
    }
    drop_fk, add_fk, keep_unique, widened = [], [], set(), set()
    cursor.execute(_FOREIGN)
    for table, name, target, on_delete, deferrable, cols, target_cols in cursor.fetchall():
        if target in column and table not in column and (table, *cols) in UNCHECKED_LINKS:
            drop_fk.append(f"ALTER TABLE {_q(table)} DROP CONSTRAINT {_q(name)}")
            continue
        defer = " DEFERRABLE INITIALLY DEFERRED" if deferrable else ""
        action = _ON_DELETE[on_delete]
        widen = (
            table in ready
            and target in ready
            and column[table] not in cols
            and column[target] not in target_cols
        )
        if widen and on_delete == "n":
            # A plain SET NULL would null the distribution column too: PostgreSQL 15's column
            # list nulls only the link (e.g. an e-mail outliving its purged outbox event).
            action = f"SET NULL ({_cols(cols)})"
        if widen:
            widened.add((table, frozenset(cols)))
            cols, target_cols = [*cols, column[table]], [*target_cols, column[target]]
        elif target in rekeyed and list(target_cols) == list(rekeyed[target][1]):
            keep_unique.add(target)  # still points at the single-column key
        else:
            continue
        drop_fk.append(f"ALTER TABLE {_q(table)} DROP CONSTRAINT {_q(name)}")
        add_fk.append(
            f"ALTER TABLE {_q(table)} ADD CONSTRAINT {_q(name)} FOREIGN KEY ({_cols(cols)}) "
            f"REFERENCES {_q(target)} ({_cols(target_cols)}) ON DELETE {action}{defer}"
        )
    keys = []
    for table, (name, cols) in sorted(rekeyed.items()):
        keys.append(
            f"ALTER TABLE {_q(table)} DROP CONSTRAINT {_q(name)}, "
            f"ADD CONSTRAINT {_q(name)} PRIMARY KEY ({_cols([*cols, column[table]])})"
        )
        if table in keep_unique:
            keys.append(
                f"ALTER TABLE {_q(table)} ADD CONSTRAINT {_q(table + '_single_key')} "
                f"UNIQUE ({_cols(cols)})"
            )
    return [*drop_fk, *keys, *add_fk, *_widened_uniques(cursor, column, widened)]


def _widened_uniques(cursor, column: Mapping[str, str], widened: set) -> list[str]:
    """Step 3: the uniques on exactly a widened foreign key's columns, with the sale added."""
    statements = []
    cursor.execute(_UNIQUE)
    for table, index, constraint, predicate, cols in sorted(cursor.fetchall()):
        if (table, frozenset(cols)) not in widened:
            continue
        wider = _cols([*cols, column[table]])
        if constraint is not None:
            statements.append(
                f"ALTER TABLE {_q(table)} DROP CONSTRAINT {_q(constraint)}, "
                f"ADD CONSTRAINT {_q(constraint)} UNIQUE ({wider})"
            )
            continue
        where = f" WHERE {predicate}" if predicate else ""
        statements.append(f"DROP INDEX {_q(index)}")
        statements.append(f"CREATE UNIQUE INDEX {_q(index)} ON {_q(table)} ({wider}){where}")
    return statements
