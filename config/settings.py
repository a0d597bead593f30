"""Seatkeeper settings, read from the environment (twelve-factor).

With no DATABASE_URL / REDIS_URL the project runs on embedded defaults: SQLite with
IMMEDIATE transactions, local-memory cache, in-memory channel layer and an in-process
Celery broker.  With them set it runs on PostgreSQL and Redis, as in production.
"""

from datetime import timedelta
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env("DJANGO_SECRET_KEY", default="insecure-dev-key-change-me-in-production-0123456789")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "django_celery_beat",
    "channels",
    "flights",
    "bookings",
    "payments",
    "waitroom",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"]["options"] = f"-c lock_timeout={DB_LOCK_TIMEOUT_MS}"
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=0)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
elif DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE takes the write lock at BEGIN, so two writers serialise instead of one
    # failing half-way with "database is locked" on upgrade.
    DATABASES["default"]["OPTIONS"] = {"transaction_mode": "IMMEDIATE", "timeout": 20}
DATABASES["default"]["TEST"] = {"NAME": env("TEST_DATABASE_NAME", default=None)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USES_POSTGRES = DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"

# --- Redis: cache, channel layer, broker --------------------------------------------------
REDIS_URL = env("REDIS_URL", default="")
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
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": env("CHANNELS_PREFIX", default="asgi")},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Celery ---------------------------------------------------------------------------------
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL or "memory://")
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True

# --- Auth -----------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# --- i18n / time ----------------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
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
EMAIL_FILE_PATH = VAR_DIR / "mail"
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="Seatkeeper <tickets@seatkeeper.example>")

# --- Domain ---------------------------------------------------------------------------------
SEATKEEPER = {
    "HOLD_TTL": timedelta(seconds=env.int("HOLD_TTL_SECONDS", default=600)),
    "MAX_PASSENGERS": 9,
    "EXPIRE_BATCH_SIZE": 500,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
}

# --- Payments -------------------------------------------------------------------------------
# The gateway is chosen here; "sandbox" is the built-in simulated provider (demo and tests).
PAYMENTS = {
    "GATEWAY": env("PAYMENTS_GATEWAY", default="sandbox"),
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
PAYMENTS_SANDBOX = {
    "WEBHOOK_URL": env("SANDBOX_WEBHOOK_URL", default="http://127.0.0.1:8000/api/payments/webhook"),
    "WEBHOOK_SECRET": env("SANDBOX_WEBHOOK_SECRET", default="whsec_sandbox_local_only"),
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
# Periodic payment housekeeping (merged with any other app's schedule).
CELERY_BEAT_SCHEDULE = {
    **globals().get("CELERY_BEAT_SCHEDULE", {}),
    "payments-purge-idempotency-keys": {
        "task": "payments.tasks.purge_idempotency_keys_task", "schedule": 3600.0,
    },
    "payments-retry-pending-refunds": {
        "task": "payments.tasks.retry_pending_refunds", "schedule": 300.0,
    },
}
