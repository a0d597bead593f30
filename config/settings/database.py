"""PostgreSQL (or the embedded SQLite) from DATABASE_URL, the read replica."""

from config.database import connection_options
from config.settings.environment import VAR_DIR, env

# --- Database -------------------------------------------------------------------------------
# PostgreSQL is the source of truth for seat availability.  lock_timeout bounds how long a
# hold waits for a contended row; a timeout becomes a polite "too busy, retry" answer.
DB_LOCK_TIMEOUT_MS = env.int("DB_LOCK_TIMEOUT_MS", default=10_000)
DATABASE_URL = env("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'seatkeeper.sqlite3'}")
DATABASES = {"default": env.db_url_config(DATABASE_URL)}
# DB_PGBOUNCER=true: DATABASE_URL is PgBouncer in transaction mode (docs/operations.md).
DB_PGBOUNCER = env.bool("DB_PGBOUNCER", default=False)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {})
    # lock_timeout is not a startup option (PgBouncer refuses those): it is the role's setting
    # in this database, written by every `migrate` (kernel/locking.py, apply_lock_timeout).
    # Prepared statements only on a direct connection (config/database.py): PgBouncer 1.18
    # cannot carry them in transaction mode.  Unset: none, as Django has it.
    DATABASES["default"] = connection_options(
        DATABASES["default"],
        pgbouncer=DB_PGBOUNCER,
        prepare_threshold=env.int("DB_PREPARE_THRESHOLD", default=None),
    )
    # Connection reuse (docs/performance.md).  By default the web server runs HTTP on a fixed
    # pool of threads (config/asgi.py), each keeping one persistent connection
    # (DB_CONN_MAX_AGE); so do Celery processes.  Django's ASGI handler instead runs each
    # request in a thread of its own, where persistent connections would pile up ("too many
    # clients"): with SEATKEEPER_HTTP=asgi, config/asgi.py turns on a per-process psycopg
    # pool (DB_POOL): a request borrows a connection and gives it back when it ends.
    if env.bool("DB_POOL", default=False):
        DATABASES["default"]["OPTIONS"]["pool"] = {
            "min_size": env.int("DB_POOL_MIN_SIZE", default=2),
            "max_size": env.int("DB_POOL_MAX_SIZE", default=8),
            # A request that cannot get a connection this fast is answered 503 "too busy".
            "timeout": env.float("DB_POOL_TIMEOUT_SECONDS", default=10.0),
            "max_idle": 300,
        }
        DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps connections, not Django
    else:
        DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=0)
    # A reused connection is checked at the first query of each request, so a database
    # restart costs no failed request: the socket is asked whether the server said anything
    # (a FATAL, a hang-up), and only then is Django's SELECT 1 sent, so a healthy connection
    # costs no round trip (kernel/database_backend).  DB_CONN_HEALTH_CHECKS=0 turns it off.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = env.bool("DB_CONN_HEALTH_CHECKS", default=True)
    DATABASES["default"]["ENGINE"] = "kernel.database_backend"
elif DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE takes the write lock at BEGIN, so two writers serialise instead of one
    # failing half-way with "database is locked" on upgrade.
    DATABASES["default"]["OPTIONS"] = {"transaction_mode": "IMMEDIATE", "timeout": 20}
DATABASES["default"]["TEST"] = {"NAME": env("TEST_DATABASE_NAME", default=None)}
# A hot standby for reads that may lag (kernel/replica.py; docs/operations.md, "Read
# replica"): search, seat-map rebuilds, admin lists.  Holds, payments, the waitlist and every
# read inside a transaction stay on the primary.  Same options as the primary (and the same
# pooler rules when DB_PGBOUNCER is set); a short connect timeout, so a replica that is down
# costs one slow check per REPLICA_CHECK_SECONDS, not one per request.
DATABASE_REPLICA_URL = env("DATABASE_REPLICA_URL", default="")
if DATABASE_REPLICA_URL and DATABASES["default"]["ENGINE"] == "kernel.database_backend":
    _replica = env.db_url_config(DATABASE_REPLICA_URL)
    DATABASES["replica"] = {
        **DATABASES["default"],
        **{key: _replica[key] for key in ("NAME", "USER", "PASSWORD", "HOST", "PORT")},
        "OPTIONS": {**DATABASES["default"]["OPTIONS"], "connect_timeout": 2},
        "TEST": {"MIRROR": "default"},
    }
    DATABASES["replica"]["OPTIONS"].pop("pool", None)  # few reads; no second pool
    DATABASE_ROUTERS = ["kernel.replica.ReplicaRouter"]
REPLICA = {
    # Search and admin lists read from the replica while it lags by at most this.
    "MAX_LAG_SECONDS": env.float("REPLICA_MAX_LAG_SECONDS", default=2.0),
    # How often each process measures the lag (one query on each server).
    "CHECK_SECONDS": env.float("REPLICA_CHECK_SECONDS", default=1.0),
    # A seat-map rebuild waits this long for the replica to replay what the primary has,
    # then reads the primary instead.  Holds commit asynchronously, and the WAL writer sends
    # such commits on within wal_writer_delay (200 ms), so waiting less often means "primary".
    "CATCH_UP_WAIT_SECONDS": env.float("REPLICA_CATCH_UP_WAIT_SECONDS", default=0.25),
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USES_POSTGRES = DATABASES["default"]["ENGINE"] == "kernel.database_backend"
