"""What a PostgreSQL connection may rely on, directly and through PgBouncer.

In transaction mode PgBouncer hands a server connection to a client for one transaction, then
to another client.  So nothing may outlive a transaction on the server: advisory locks are
`pg_advisory_xact_lock`, settings are `set_config(..., true)` / `SET LOCAL`, there are no
server-side cursors (a `WITH HOLD` cursor outlives its transaction), no prepared statements
(PgBouncer 1.18 cannot carry them in transaction mode), no LISTEN/NOTIFY, and no startup
`options` (PgBouncer refuses the packet; `ignore_startup_parameters` would drop it silently).
The one session default the engine needs, `lock_timeout`, is the role's setting in its
database instead (`kernel/locking.py` `apply_lock_timeout`, run by every `migrate`), so it
holds on every server connection the pooler opens.  docs/operations.md, "PgBouncer".

On a direct connection (migrate, the embedded and development setups, a deployment without
the pooler) prepared statements may be turned on with DB_PREPARE_THRESHOLD: the server then
parses and plans a statement sent that many times once per connection (issue 26).  Through
PgBouncer they stay off whatever the setting says.
"""

from __future__ import annotations

from typing import Any


def through_pgbouncer(database: dict[str, Any]) -> dict[str, Any]:
    """`database` (a DATABASES entry) for a DATABASE_URL that points at PgBouncer."""
    options = {**database.get("OPTIONS", {})}
    # Django's cursors bind parameters client-side and never prepare; say so explicitly, so
    # that turning `server_side_binding` on elsewhere cannot bring prepared statements back.
    options["prepare_threshold"] = None
    options.pop("server_side_binding", None)
    # QuerySet.iterator() would DECLARE a cursor (WITH HOLD outside a transaction): fetch its
    # chunks from one ordinary query instead.
    return {**database, "OPTIONS": options, "DISABLE_SERVER_SIDE_CURSORS": True}


def with_prepared_statements(database: dict[str, Any], *, threshold: int | None) -> dict[str, Any]:
    """`database` on a direct connection, preparing each statement after `threshold` runs.

    Django's cursors bind parameters client-side (`psycopg.ClientCursor`), which never
    prepares, so server-side binding comes on with the threshold.  None: as Django has it.
    """
    if threshold is None:
        return database
    options = {**database.get("OPTIONS", {})}
    options["server_side_binding"] = True
    options["prepare_threshold"] = threshold
    return {**database, "OPTIONS": options}


def connection_options(
    database: dict[str, Any], *, pgbouncer: bool, prepare_threshold: int | None
) -> dict[str, Any]:
    """A PostgreSQL DATABASES entry for its connection kind: through the pooler never with
    prepared statements, direct with them when asked."""
    if pgbouncer:
        return through_pgbouncer(database)
    return with_prepared_statements(database, threshold=prepare_threshold)
