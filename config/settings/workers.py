"""Celery and beat, and the workers' own knobs: the outbox relay, notifications, the event
log, e-mail links and ticket signing."""

from datetime import timedelta

from config.settings.caches_and_channels import REDIS_URL
from config.settings.environment import env
from config.settings.security import SECRET_KEY

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
