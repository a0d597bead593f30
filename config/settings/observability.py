"""Logs, metrics and error tracking (docs/operations.md)."""

from config.settings.environment import env

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
