"""Liveness and readiness.

`/healthz` (liveness): the process answers.  It touches no database, Redis or broker on
purpose: a database outage must not make the orchestrator restart every web process (which
would not fix the database and would drop the requests that still work).  It never returns
error text.

`/readyz` (readiness): may this process take traffic?  It checks PostgreSQL, Redis (when
configured) and the Celery broker with short timeouts and names what is down, never why:
the detail (addresses, user names, driver messages) goes to the log only.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import connection
from django.http import JsonResponse

logger = logging.getLogger(__name__)
CHECK_TIMEOUT_SECONDS = 1


def healthz(request):
    return JsonResponse({"status": "ok"})


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def check_redis() -> None:
    import redis

    client = redis.Redis.from_url(
        settings.REDIS_URL,
        socket_timeout=CHECK_TIMEOUT_SECONDS,
        socket_connect_timeout=CHECK_TIMEOUT_SECONDS,
    )
    try:
        client.ping()
    finally:
        client.close()


def check_broker() -> None:
    from config.celery import app

    with app.connection_for_read(settings.CELERY_BROKER_URL) as conn:
        conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=1)


def checks() -> dict:
    found = {"database": check_database, "broker": check_broker}
    if settings.REDIS_URL:
        found["redis"] = check_redis
    return found


def readyz(request):
    down = []
    for name, check in checks().items():
        try:
            check()
        except Exception:
            logger.exception("readiness check %s failed", name)
            down.append(name)
    if down:
        return JsonResponse({"status": "unavailable", "down": sorted(down)}, status=503)
    return JsonResponse({"status": "ok", "checked": sorted(checks())})
