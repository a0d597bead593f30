"""Seatkeeper settings, read from the environment (twelve-factor).

With no DATABASE_URL / REDIS_URL the project runs on embedded defaults: SQLite with
IMMEDIATE transactions, local-memory cache, in-memory channel layer and an in-process
Celery broker.  With them set it runs on PostgreSQL and Redis, as in production.
"""

from datetime import timedelta
from pathlib import Path

import environ

from config.database import connection_options

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=False)
# The in-repository fallbacks below are for development only: with DEBUG off, the system
# checks in config/checks.py refuse to start (runserver, serve, migrate) while any of them is
# in use.  The prefix makes `check --deploy` flag the key too.
DEV_SECRET_KEY = "django-insecure-dev-key-change-me-in-production-0123456789abcdef"
SECRET_KEY = env("DJANGO_SECRET_KEY", default=DEV_SECRET_KEY)
ALLOWED_HOSTS = env.list(
    "DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"]
)
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "config.apps.SeatkeeperConfig",
    "config.admin_site.SeatkeeperAdminConfig",  # django.contrib.admin, sale day first
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "django_celery_beat",
    "axes",
    "channels",
    "kernel",
    "accounts",
    "flights",
    "events",
    "bookings",
    "payments",
    "waitroom",
    "partners",
    "storefront",
    "checkin_sync",
    "languages",
    "config.api",
]

MIDDLEWARE = [
    # An API request with no cookie takes the same middlewares less LEAN_API_SKIPS, the
    # hook-style ones merged into one layer (config/lean_chain.py); all else takes this list.
    "config.lean_chain.LeanApiMiddleware",
    # Then: every response (even an early error) carries the request id and is measured.
    "config.middleware.RequestIdMiddleware",
    "config.middleware.MetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # WhiteNoise's own middleware is sync-only: under ASGI it would cost every request two
    # extra thread hops.  Ours is the same lookup, usable from async code.
    "config.static.AsyncWhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After the session and the user: Accept-Language (or the language cookie) chooses the
    # language, and a logged-in customer's stored preference wins over both.
    # Django's LocaleMiddleware without its language-prefix work (ours has no i18n_patterns).
    "languages.middleware.LocaleMiddleware",
    "languages.middleware.PreferredLanguageMiddleware",
    # Django's messages, the storage made only when used (config/middleware.py).
    "config.middleware.LazyMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # django-axes asks to be last: turns a locked-out login into our 429 (config/lockout.py).
    # Only the database-outage middleware is inside it (it must see view exceptions first).
    "axes.middleware.AxesMiddleware",
    # Last, so it sees exceptions from views first: a database outage is a 503 page.
    "config.middleware.DatabaseUnavailableMiddleware",
]

# Off: every request takes the whole list above (the lean chain's tests compare both).
LEAN_API_REQUESTS = env.bool("LEAN_API_REQUESTS", default=True)
# What an /api/ request without a Cookie header skips, each because it does nothing for one:
LEAN_API_SKIPS = [
    # No static file is served under /api/ (STATIC_URL is /static/, no WHITENOISE_ROOT).
    "config.static.AsyncWhiteNoiseMiddleware",
    # Every /api/ route is a DRF view, and none adds a Django message; unused, the lazy
    # storage writes nothing (and without a cookie there is nothing to read).
    "config.middleware.LazyMessageMiddleware",
    # Only a process_exception hook, which the handler runs for both chains.
    "config.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    },
]

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

# --- Redis: cache, channel layer, broker --------------------------------------------------
REDIS_URL = env("REDIS_URL", default="")
# A Redis Cluster (`redis://host:port,host:port,...`) for what is keyed by sale, room or user:
# the hold filters, the waiting room's queue and the cache.  Celery's broker and the channel
# layer stay on REDIS_URL (neither supports a cluster: docs/operations.md), so it needs both.
REDIS_CLUSTER_URL = env("REDIS_CLUSTER_URL", default="") if REDIS_URL else ""
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {
                # Redis is only a fast filter: when it vanishes, reads fall through to the
                # database instead of failing the request.
                "IGNORE_EXCEPTIONS": True,
                "SOCKET_CONNECT_TIMEOUT": 1,
                "SOCKET_TIMEOUT": 1,
            },
            "KEY_PREFIX": env("CACHE_KEY_PREFIX", default="sk"),
        }
    }
    DJANGO_REDIS_IGNORE_EXCEPTIONS = True
    if REDIS_CLUSTER_URL:
        # The cache (seat maps and their versions, token and throttle keys) on the cluster,
        # behind Django's Redis backend with redis-py's RedisCluster: django-redis has no
        # cluster client (kernel/cluster_cache.py, docs/operations.md "Redis Cluster").
        CACHES["default"] = {
            **CACHES["default"],
            "BACKEND": "kernel.cluster_cache.ClusterCache",
            "LOCATION": REDIS_CLUSTER_URL,
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 1},
        }
    # Each web process reads its sockets' messages with BZPOPMIN, which Redis holds open for
    # up to `brpop_timeout` (5 s) when nothing comes.  redis-py 8 reads with a 5-s socket
    # timeout by default, so an idle process lost that race: the read raised TimeoutError
    # and killed the websocket that happened to be reading (13 queue sockets per 2,000-wide
    # sale, docs/performance.md).  The read timeout must outlast the blocking pop; it still
    # bounds a Redis that stops answering.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [
                    {
                        "address": REDIS_URL,
                        "socket_timeout": env.float("CHANNELS_SOCKET_TIMEOUT", default=15.0),
                        "socket_connect_timeout": 5,
                    }
                ],
                "prefix": env("CHANNELS_PREFIX", default="asgi"),
            },
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Celery ---------------------------------------------------------------------------------
# Why each setting is what it is: docs/workers.md.  Every task takes ids, calls a service and
# is safe to run twice, which is what makes the at-least-once settings below affordable.
# "localhost": kombu names the in-process transport by a host, and warns at start without one.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL or "memory://localhost/")
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
CELERY_ENABLE_UTC = True
# Acknowledge after the task ran, and give the message back when the worker process dies:
# a crash mid-task means "run it again", never "silently dropped".
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
# One message at a time per process: with acks_late a prefetched message would sit unacked
# behind a slow task (and be redelivered elsewhere when the Redis visibility timeout ends).
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# JSON only: a pickle on the broker would be code execution for whoever can write to Redis.
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A stuck task (SMTP that never answers, a lock wait) must not take a worker for good.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=60)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=90)
# Redis redelivers an unacknowledged message after this long; it must exceed the longest task.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# DatabaseScheduler behind a Redis lock: a second beat started by mistake stands by.
CELERY_BEAT_SCHEDULER = "kernel.beat:SingleBeatScheduler"
# How long a dead beat's lock outlives it (the standby takes over after at most this).
BEAT_LOCK_TTL_SECONDS = env.float("BEAT_LOCK_TTL_SECONDS", default=15.0)
CELERY_BEAT_SYNC_EVERY = 1

# Workers' own knobs: the outbox relay, notifications and ticket signing.
OUTBOX = {
    "RELAY_BATCH_SIZE": env.int("OUTBOX_RELAY_BATCH_SIZE", default=100),
    "MAX_ATTEMPTS": env.int("OUTBOX_MAX_ATTEMPTS", default=12),
    # Kick the relay when a transaction that wrote events commits, so consumers run within
    # milliseconds instead of waiting for the next beat tick.
    "KICK_ON_COMMIT": env.bool("OUTBOX_KICK_ON_COMMIT", default=True),
    # A kick still queued covers the commits after it (kernel.kicks): no second one is sent
    # while its flag stands.  The TTL bounds how long a lost kick's flag delays the next;
    # beat's one-second tick takes the flag and relays regardless.
    "KICK_PENDING_SECONDS": env.float("OUTBOX_KICK_PENDING_SECONDS", default=5.0),
}
NOTIFICATIONS = {
    "MAX_ATTEMPTS": 5,
    "STALE_AFTER": timedelta(minutes=5),
}  # The event log for the airline's other systems (docs/event-log.md): every outbox event is
# also published to NATS JetStream, one subject per booking.  Unset URL = off (the embedded
# mode has no broker); PostgreSQL stays the truth and `OutboxEvent.logged_at` the cursor.
EVENT_LOG = {
    "URL": env("EVENT_LOG_URL", default=""),
    "STREAM": env("EVENT_LOG_STREAM", default="SEATKEEPER_EVENTS"),
    "SUBJECT_PREFIX": env("EVENT_LOG_SUBJECT_PREFIX", default="seatkeeper"),
    "BATCH_SIZE": env.int("EVENT_LOG_BATCH_SIZE", default=200),
    # JetStream drops a second message with the same Nats-Msg-Id (the outbox event id) within
    # this window: a relay that died between the log's ack and its mark re-publishes harmlessly.
    "DUPLICATE_WINDOW_SECONDS": env.int("EVENT_LOG_DUPLICATE_WINDOW_SECONDS", default=3600),
    # How far back a consumer can replay; at least the outbox's own 14 days.
    "MAX_AGE_DAYS": env.int("EVENT_LOG_MAX_AGE_DAYS", default=30),
    "PUBLISH_TIMEOUT_SECONDS": env.float("EVENT_LOG_PUBLISH_TIMEOUT_SECONDS", default=5.0),
    # One relay at a time publishes; a dead one's lease runs out after this.
    "LEASE_SECONDS": env.int("EVENT_LOG_LEASE_SECONDS", default=30),
}

# Links in e-mails point here.
PUBLIC_BASE_URL = env("PUBLIC_BASE_URL", default="http://localhost:8000")
# Ticket codes are HMAC-SHA256 signed.  Several keys may verify (rotation); the current one
# signs.  Production sets TICKET_SIGNING_KEY; the default derives from SECRET_KEY.
TICKET_SIGNING_KEY_ID = env("TICKET_SIGNING_KEY_ID", default="k1")
DEV_TICKET_SIGNING_KEY = f"ticket-signing:{SECRET_KEY}"
TICKET_SIGNING_KEYS = {
    TICKET_SIGNING_KEY_ID: env("TICKET_SIGNING_KEY", default=DEV_TICKET_SIGNING_KEY),
    **env.dict("TICKET_SIGNING_OLD_KEYS", default={}),
}
# Rotating codes (issue 29, docs/tickets.md): a ticket page shows a new code every step; a
# gate accepts the steps within SKEW_STEPS of its own clock's step.
TICKET_CODE_STEP_SECONDS = env.int("TICKET_CODE_STEP_SECONDS", default=15)
TICKET_CODE_SKEW_STEPS = env.int("TICKET_CODE_SKEW_STEPS", default=1)

# --- HTTPS and cookies ------------------------------------------------------------------------
# On by default whenever DEBUG is off; each can be switched off from the environment (e.g. a
# plain-HTTP try-out on localhost), which `check --deploy` then reports.
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=not DEBUG)
# The load balancer's health probe speaks plain HTTP to the container, and a redirected
# webhook POST is lost (the signature, not the transport, authenticates it).
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^api/payments/webhook"]
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=not DEBUG)
SESSION_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# Trust X-Forwarded-Proto only behind a proxy that sets it (and strips the client's own):
# DJANGO_SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO,https
SECURE_PROXY_SSL_HEADER = (
    tuple(v for v in env.list("DJANGO_SECURE_PROXY_SSL_HEADER", default=[]) if v) or None
)

# --- Auth -----------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "config.auth_backends.LoginAttemptsBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"

# --- Client addresses and failed logins ---------------------------------------------------------
# X-Forwarded-For is written by the client unless our own proxies overwrite it: it is read only
# when NUM_PROXIES says how many of them append to it (and, with TRUSTED_PROXIES set, only
# when the connection comes from one of them).  kernel/web/client_ip.py is the one reader.
NUM_PROXIES = env.int("NUM_PROXIES", default=0)
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])
# django-axes: after LOGIN_FAILURE_LIMIT failed logins for one username, or from one client
# address, further logins there are refused (429) for LOGIN_LOCKOUT_MINUTES; on the token API,
# /accounts/login/ and /admin/login/ alike.
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_CLIENT_IP_CALLABLE = "kernel.web.client_ip.client_ip"
AXES_USERNAME_CALLABLE = "config.auth_backends.attempted_username"
AXES_LOCKOUT_CALLABLE = "config.lockout.locked_out"
AXES_HTTP_RESPONSE_CODE = 429
# Failures expire after the lockout time; a success does not wipe them (or an attacker could
# clear an address's count by logging in to an account of their own now and then).
AXES_RESET_ON_SUCCESS = False
AXES_VERBOSE = False
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# Sign-up limits and e-mail verification (docs/security.md, "Sign-up limits and e-mail
# verification").  Rates are "<n>/<second|minute|hour|day>", counted per client address
# (kernel/web/client_ip.py) in the shared cache; a cache that does not answer lets people in.
ACCOUNTS = {
    # Accounts created per client address: each is another place in a pre-queue.
    "SIGNUPS_PER_ADDRESS": env("SIGNUPS_PER_ADDRESS", default="5/hour"),
    # "Send me the link" per account, and password-reset mails per client address.
    "VERIFICATION_LINKS_PER_ACCOUNT": env("VERIFICATION_LINKS_PER_ACCOUNT", default="5/hour"),
    "PASSWORD_RESETS_PER_ADDRESS": env("PASSWORD_RESETS_PER_ADDRESS", default="5/hour"),
    # A verification link works this long (Django's own PASSWORD_RESET_TIMEOUT bounds resets).
    "VERIFICATION_LINK_MAX_AGE": timedelta(hours=env.int("VERIFICATION_LINK_HOURS", default=72)),
}

# --- i18n / time ----------------------------------------------------------------------------
# Customers read English, German or Russian (docs: README, "Languages").  The catalogues in
# locale/ are compiled by the install step (scripts/compile_messages.py), never committed.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("ru", "Русский")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"
MEDIA_ROOT = BASE_DIR / "var" / "media"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# --- E-mail ---------------------------------------------------------------------------------
EMAIL_BACKEND = env("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
EMAIL_FILE_PATH = env("EMAIL_FILE_PATH", default=str(VAR_DIR / "mail"))
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="Seatkeeper <tickets@seatkeeper.example>")

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

# --- Logs, metrics, error tracking (docs/operations.md) ----------------------------------
# LOG_FORMAT=json: one JSON object per line, with the request id of the web request (or of
# the request that queued the Celery task) in every line.
LOG_FORMAT = env("LOG_FORMAT", default="plain")
LOG_LEVEL = env("LOG_LEVEL", default="INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "config.logs.RequestIdFilter"},
        "expected_conflicts": {"()": "config.logging_filters.SkipExpectedConflicts"},
    },
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {"()": "config.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if LOG_FORMAT == "json" else "plain",
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # A 409 is a race's loser getting its answer, hundreds per sale: not a WARNING line.
        "django.request": {"filters": ["expected_conflicts"]},
    },
}
# /metrics is off (404) unless METRICS_ENABLED; then it needs the bearer token (when set)
# and a client address in METRICS_ALLOWED_IPS (when set).  Enabled with neither is refused
# by a system check outside DEBUG.
METRICS = {
    "ENABLED": env.bool("METRICS_ENABLED", default=False),
    "TOKEN": env("METRICS_TOKEN", default=""),
    "ALLOWED_IPS": env.list("METRICS_ALLOWED_IPS", default=[]),
    # Celery queues whose length (Redis LLEN) /metrics reports.
    "CELERY_QUEUES": env.list("METRICS_CELERY_QUEUES", default=["celery"]),
}
SENTRY = {
    "DSN": env("SENTRY_DSN", default=""),
    "ENVIRONMENT": env("SENTRY_ENVIRONMENT", default="production"),
    "TRACES_SAMPLE_RATE": env.float("SENTRY_TRACES_SAMPLE_RATE", default=0.0),
}

# --- REST API -------------------------------------------------------------------------------
# JSON is camelCase on the wire both ways; errors are RFC 9457 problem details.  Token auth for
# partners, session auth (with CSRF) for the site's own pages.  Per-user throttles count in the
# shared cache (Redis), so every web worker sees the same budget.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an anonymous request then gets 401 with `WWW-Authenticate: Token`.
        "config.api.tokens.CachedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # camelCase JSON as djangorestframework-camel-case writes it, by orjson
    # (kernel/web/renderers.py).
    "DEFAULT_RENDERER_CLASSES": ["kernel.web.renderers.CamelJSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "kernel.web.negotiation.QuickContentNegotiation",
    "DEFAULT_PARSER_CLASSES": ["config.api.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.exceptions.problem_exception_handler",
    "NUM_PROXIES": NUM_PROXIES,
    "DEFAULT_THROTTLE_RATES": {
        "holds": env("API_THROTTLE_HOLDS", default="30/min"),
        "payments": env("API_THROTTLE_PAYMENTS", default="20/min"),
        # Token requests per client address (password spraying) and per account named.
        "auth": env("API_THROTTLE_AUTH", default="10/min"),
        "auth_account": env("API_THROTTLE_AUTH_ACCOUNT", default="5/min"),
    },
}
# "12A" style values are never touched; only keys change case ("seat_no" <-> "seatNo").
JSON_CAMEL_CASE = {"JSON_UNDERSCOREIZE": {"no_underscore_before_number": True}}
# How long a token's user is remembered in the cache (config/api/tokens.py says what empties it).
API_TOKEN_CACHE_SECONDS = env.int("API_TOKEN_CACHE_SECONDS", default=60)
API_CACHE = {
    # The article's trade-off: reads may be a little stale, holds always ask the database.
    "FLIGHT_SEARCH_SECONDS": env.int("API_FLIGHT_SEARCH_CACHE_SECONDS", default=30),
    "SEAT_MAP_SECONDS": env.int("API_SEAT_MAP_CACHE_SECONDS", default=3),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Seatkeeper API",
    "DESCRIPTION": (
        "Seats that are never sold twice. JSON bodies are camelCase; errors are RFC 9457 "
        "problem details (`application/problem+json`). Authenticate with "
        "`Authorization: Token <token>` from `POST /api/auth/token`, or with the site's session "
        "cookie plus the `X-CSRFToken` header."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "FareClassEnum": "flights.models.FareClass",
        "BookingStatusEnum": "bookings.models.BookingStatus",
        "SeatStatusEnum": "flights.models.SeatStatus",
        "FlightStatusEnum": "flights.models.FlightStatus",
        "EventStatusEnum": "events.models.EventStatus",
        "EventCategoryEnum": "events.models.EventCategory",
        "PaymentStatusEnum": "payments.models.PaymentStatus",
        "TicketStatusEnum": "bookings.models.TicketStatus",
        "WaitlistStatusEnum": "bookings.models.WaitlistStatus",
        "ScanOutcomeEnum": "bookings.tickets.ScanOutcome",
    },
    "PREPROCESSING_HOOKS": ["payments.api.document_gateways_in_use"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "drf_spectacular.contrib.djangorestframework_camel_case.camelize_serializer_fields",
        "kernel.web.openapi.add_problem_headers",
        "kernel.web.openapi.camel_case_path_parameters",
        "kernel.web.openapi.forbid_nul_in_request_strings",
    ],
}

# --- Payments -------------------------------------------------------------------------------
# The gateway is chosen here; "sandbox" is the built-in simulated provider (demo and tests).
PAYMENTS = {
    "GATEWAY": env("PAYMENTS_GATEWAY", default="sandbox"),
    # The simulated gateway with DEBUG off is refused at start-up unless a demo says so.
    "SANDBOX_IN_PRODUCTION": env.bool("PAYMENTS_SANDBOX_IN_PRODUCTION", default=False),
    # Keys the HMAC that fingerprints a pay request (Idempotency-Key reuse detection), so
    # the stored fingerprint reveals nothing about the request, card numbers included.
    "FINGERPRINT_KEY": env("PAYMENTS_FINGERPRINT_KEY", default=f"payment-fingerprint:{SECRET_KEY}"),
    # A payment still PROCESSING (a crash between recording and applying the gateway's
    # answer) this long after its last change is reconciled with the gateway by a beat job.
    "RECONCILE_AFTER": timedelta(seconds=env.int("PAYMENTS_RECONCILE_AFTER_SECONDS", default=120)),
    # Idempotency keys are kept at least 24 h (see docs/payments.md); then purged.
    "IDEMPOTENCY_KEY_RETENTION": timedelta(
        hours=env.int("PAYMENTS_IDEMPOTENCY_KEY_HOURS", default=48)
    ),
    "WEBHOOK_TOLERANCE_SECONDS": 300,
    # The webhook waits at most this long for a booking lock, then answers 503 so the
    # gateway retries, instead of tying up a worker.
    "WEBHOOK_LOCK_TIMEOUT_MS": env.int("PAYMENTS_WEBHOOK_LOCK_TIMEOUT_MS", default=2_000),
    "REFUND_MAX_RETRIES": 8,
}
DEV_SANDBOX_WEBHOOK_SECRET = "whsec_sandbox_local_only"
PAYMENTS_SANDBOX = {
    "WEBHOOK_URL": env("SANDBOX_WEBHOOK_URL", default="http://127.0.0.1:8000/api/payments/webhook"),
    "WEBHOOK_SECRET": env("SANDBOX_WEBHOOK_SECRET", default=DEV_SANDBOX_WEBHOOK_SECRET),
    "DELIVER_WEBHOOKS": env.bool("SANDBOX_DELIVER_WEBHOOKS", default=True),
    "TIMEOUT_SECONDS": 5,
    "MAX_RETRIES": env.int("SANDBOX_WEBHOOK_MAX_RETRIES", default=8),
    "BACKOFF_BASE_SECONDS": 2,
    "BACKOFF_MAX_SECONDS": 600,
    # Misbehaviour on purpose: extra copies of every delivery, a delay before delivering,
    # and a "payment.failed" event sent after each success.
    "DUPLICATE_DELIVERIES": env.int("SANDBOX_DUPLICATE_DELIVERIES", default=0),
    "DELAY_SECONDS": env.int("SANDBOX_DELAY_SECONDS", default=0),
    "FAIL_AFTER_SUCCESS": env.bool("SANDBOX_FAIL_AFTER_SUCCESS", default=False),
}
STRIPE = {
    "API_KEY": env("STRIPE_API_KEY", default=""),
    "WEBHOOK_SECRET": env("STRIPE_WEBHOOK_SECRET", default=""),
    "MAX_NETWORK_RETRIES": 2,
}

# --- Partners: outgoing webhooks (docs/operations.md) --------------------------------------
PARTNER_WEBHOOKS = {
    "TIMEOUT_SECONDS": env.float("PARTNER_WEBHOOK_TIMEOUT_SECONDS", default=5),
    "MAX_ATTEMPTS": env.int("PARTNER_WEBHOOK_MAX_ATTEMPTS", default=12),
    # Attempt n waits BASE * 2**(n-1) seconds, at most MAX.
    "BACKOFF_BASE_SECONDS": env.float("PARTNER_WEBHOOK_BACKOFF_BASE_SECONDS", default=10),
    "BACKOFF_MAX_SECONDS": env.float("PARTNER_WEBHOOK_BACKOFF_MAX_SECONDS", default=3600),
    # A delivery SENDING this long is taken as abandoned (its worker died) and sent again.
    "STALE_AFTER_SECONDS": env.float("PARTNER_WEBHOOK_STALE_AFTER_SECONDS", default=120),
    # Endpoints on loopback/private addresses: only for dev and tests.
    "ALLOW_PRIVATE_URLS": env.bool("PARTNER_WEBHOOK_ALLOW_PRIVATE_URLS", default=DEBUG),
    # The CA certificates partners' TLS certificates are checked against (a PEM file); empty:
    # the public roots shipped with certifi.  Never read from the environment at send time
    # (REQUESTS_CA_BUNDLE is ignored: the sending session does not trust the environment).
    "CA_BUNDLE": env.str("PARTNER_WEBHOOK_CA_BUNDLE", default=""),
    # After a secret rotation the previous secret signs too, this long.
    "SECRET_OVERLAP_HOURS": env.float("PARTNER_WEBHOOK_SECRET_OVERLAP_HOURS", default=24),
}
# Seals partner signing secrets at rest (partners/secret_box.py).  Production sets its own;
# the default derives from SECRET_KEY (refused with DEBUG off, config/checks.py).
DEV_PARTNER_SECRETS_KEY = f"partner-secrets:{SECRET_KEY}"
PARTNER_SECRETS_KEY = env("PARTNER_SECRETS_KEY", default=DEV_PARTNER_SECRETS_KEY)

# Error tracking only when a DSN is configured (no DSN: the SDK is never initialised).
from config.sentry import init_sentry  # noqa: E402

init_sentry(
    dsn=SENTRY["DSN"],
    environment=SENTRY["ENVIRONMENT"],
    traces_sample_rate=SENTRY["TRACES_SAMPLE_RATE"],
)
