"""Liveness for load balancers and compose healthchecks: the process answers and the
database (the source of truth) answers.  Redis is deliberately not required: it may vanish."""

from django.db import connection
from django.http import JsonResponse


def healthz(request):
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:
        return JsonResponse({"status": "unhealthy", "database": str(exc)[:200]}, status=503)
    return JsonResponse({"status": "ok"})
