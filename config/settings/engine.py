"""The sale engine's switches: holds (SEATKEEPER), the waiting room and the Redis filters
in front of the hold."""

from datetime import timedelta

from config.settings.caches_and_channels import REDIS_CLUSTER_URL, REDIS_URL
from config.settings.environment import env
from config.settings.security import SECRET_KEY
from config.settings.workers import CELERY_BROKER_URL

# --- Domain ---------------------------------------------------------------------------------
# Boarding passes print boarding time = departure minus this.
BOARDING_MINUTES_BEFORE_DEPARTURE = env.int("BOARDING_MINUTES_BEFORE_DEPARTURE", default=30)
SEATKEEPER = {
    "HOLD_TTL": timedelta(seconds=env.int("HOLD_TTL_SECONDS", default=600)),
    "MAX_PASSENGERS": 9,
    # Live held units one customer may have on one flight (staff and agents exempt): one
    # account must not hold a whole flight, again every HOLD_TTL.
    # The flight-era name, MAX_HELD_UNITS_PER_CUSTOMER_PER_FLIGHT, is still read as an alias
    # (README.md, the settings table of "Running it").
    "MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE": env.int(
        "MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE",
        default=env.int("MAX_HELD_UNITS_PER_CUSTOMER_PER_FLIGHT", default=9),
    ),
    "EXPIRE_BATCH_SIZE": 500,
    # False: a customer's hold commits without waiting for the WAL flush (bookings.holding
    # _lock_customer_on_sale says why that is safe); payments, sales and refunds always wait.
    "HOLD_SYNCHRONOUS_COMMIT": env.bool("HOLD_SYNCHRONOUS_COMMIT", default=False),
    # PostgreSQL: a seatless hold is one statement, the function of migration bookings 0025
    # (bookings.one_statement_hold); off: the Python path SQLite runs.
    "HOLD_IN_ONE_STATEMENT": env.bool("HOLD_IN_ONE_STATEMENT", default=True),
    "WAITLIST_OFFER_TTL": timedelta(seconds=env.int("WAITLIST_OFFER_TTL_SECONDS", default=1800)),
}

# The waiting room in front of flash sales (docs/architecture.md, "Waiting room").
WAITING_ROOM = {
    # The queue index lives here (a sorted set per sale); defaults to REDIS_URL.  In the
    # embedded mode (no Redis, the in-process broker: one process) it is an in-process Redis
    # ("memory://", waitroom/queue.py).  When Redis is down (or this is set to ""), joining
    # a queue answers 503 and admission goes on; admitted tokens keep working.
    "REDIS_URL": env(
        "WAITING_ROOM_REDIS_URL",
        default=REDIS_CLUSTER_URL
        or REDIS_URL
        or ("memory://" if CELERY_BROKER_URL.startswith("memory://") else ""),
    ),
    # REDIS_URL names a Redis Cluster (kernel/redis_clients.py).
    "REDIS_CLUSTER": env.bool("WAITING_ROOM_REDIS_CLUSTER", default=bool(REDIS_CLUSTER_URL)),
    "KEY_PREFIX": env("WAITING_ROOM_KEY_PREFIX", default="wr"),
    # A queue read or join waits at most this long for Redis, then answers 503.
    "REDIS_TIMEOUT_SECONDS": env.float("WAITING_ROOM_REDIS_TIMEOUT_SECONDS", default=1.0),
    # Admit at most this many people per unit left, counting those shopping inside.
    "HORIZON_FACTOR": env.float("WAITING_ROOM_HORIZON_FACTOR", default=1.5),
    # Beat runs the admission every TICK_SECONDS; unused rate credit older than
    # max(BURST_SECONDS, one admission interval) lapses.
    "TICK_SECONDS": env.int("WAITING_ROOM_TICK_SECONDS", default=2),
    # A tick admits in this many steps spread over it (shoppers arrive at the rate, not in
    # one burst); the queue pages get one message per tick, after the last step.
    "ADMISSION_STEPS": env.int("WAITING_ROOM_ADMISSION_STEPS", default=4),
    "BURST_SECONDS": env.int("WAITING_ROOM_BURST_SECONDS", default=4),
    "JOINS_PER_ADDRESS_PER_MINUTE": env.int("WAITING_ROOM_JOINS_PER_ADDRESS", default=60),
    "JOINS_PER_ACCOUNT_PER_MINUTE": env.int("WAITING_ROOM_JOINS_PER_ACCOUNT", default=10),
    # Admission tokens are HMAC-SHA256 signed with this key.
    "SIGNING_KEY": env("WAITING_ROOM_SIGNING_KEY", default=f"waiting-room:{SECRET_KEY}"),
    # Proof-of-work for rooms that require it (waitroom/proof_of_work.py, docs/security.md):
    # difficulty in bits (about 2^bits scrypt tries); scrypt's cost (N, r, p: 128 r N bytes
    # of memory per try, 1 MiB by default) and how long a challenge may be solved.
    "POW_BASE_BITS": env.int("WAITING_ROOM_POW_BASE_BITS", default=3),
    "POW_MAX_BITS": env.int("WAITING_ROOM_POW_MAX_BITS", default=16),
    "POW_NEW_ACCOUNT_DAYS": env.int("WAITING_ROOM_POW_NEW_ACCOUNT_DAYS", default=7),
    "POW_NEW_ACCOUNT_BITS": env.int("WAITING_ROOM_POW_NEW_ACCOUNT_BITS", default=2),
    "POW_UNVERIFIED_BITS": env.int("WAITING_ROOM_POW_UNVERIFIED_BITS", default=1),
    # Accounts this old with a verified address pay at most this (carrier-NAT humans).
    "POW_TRUSTED_ACCOUNT_DAYS": env.int("WAITING_ROOM_POW_TRUSTED_ACCOUNT_DAYS", default=30),
    "POW_TRUSTED_CAP_BITS": env.int("WAITING_ROOM_POW_TRUSTED_CAP_BITS", default=6),
    "POW_SCRYPT_N": env.int("WAITING_ROOM_POW_SCRYPT_N", default=1024),
    "POW_SCRYPT_R": env.int("WAITING_ROOM_POW_SCRYPT_R", default=8),
    "POW_CHALLENGE_SECONDS": env.int("WAITING_ROOM_POW_CHALLENGE_SECONDS", default=600),
    # Adaptive admission (waitroom/origin_health.py): the rate is reconsidered at most this
    # often, and more backends than this waiting for a lock mean the origin struggles.
    "ADAPTIVE_SECONDS": env.int("WAITING_ROOM_ADAPTIVE_SECONDS", default=6),
    "ADAPTIVE_LOCK_WAITERS": env.int("WAITING_ROOM_ADAPTIVE_LOCK_WAITERS", default=8),
    # Each web process adds its holds to the sales' health signal at most this often, in one
    # round trip (0: at every hold), not once per hold (issue 26: one round trip per node).
    "HEALTH_FLUSH_SECONDS": env.float("WAITING_ROOM_HEALTH_FLUSH_SECONDS", default=1.0),
}

# Redis filters in front of the hold (bookings/availability.py): cheap refusals for losers,
# never a decision; PostgreSQL still runs every hold that gets through.  On by default when
# there is a Redis; each switch exists so a benchmark can measure with and without.
HOLD_FILTERS = {
    "REDIS_URL": env("HOLD_FILTERS_REDIS_URL", default=REDIS_CLUSTER_URL or REDIS_URL),
    "REDIS_CLUSTER": env.bool("HOLD_FILTERS_REDIS_CLUSTER", default=bool(REDIS_CLUSTER_URL)),
    "SEAT_GATE": env.bool("HOLD_SEAT_GATE", default=True),
    "AVAILABILITY_COUNTER": env.bool("HOLD_AVAILABILITY_COUNTER", default=True),
    "SEAT_GATE_SECONDS": env.float("HOLD_SEAT_GATE_SECONDS", default=15),
    "COUNTER_TRUST_SECONDS": env.float("HOLD_COUNTER_TRUST_SECONDS", default=5),
    "TIMEOUT_SECONDS": env.float("HOLD_FILTERS_TIMEOUT_SECONDS", default=0.25),
    "BACKOFF_SECONDS": env.float("HOLD_FILTERS_BACKOFF_SECONDS", default=2),
}
