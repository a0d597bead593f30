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
