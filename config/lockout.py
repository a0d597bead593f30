"""What a client locked out by django-axes (too many failed logins) sees: problem+json under
/api/, a page everywhere else.  Both are 429 and say when to try again."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from kernel.web.problems import problem_response


def lockout_detail() -> str:
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return ngettext(
        "Too many failed logins. Try again in %(minutes)d minute.",
        "Too many failed logins. Try again in %(minutes)d minutes.",
        minutes,
    ) % {"minutes": minutes}


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials=None
) -> HttpResponse:
    retry_after = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    if request.path.startswith("/api/"):
        response = problem_response(
            status=429,
            title=_("Too many failed logins"),
            detail=lockout_detail(),
            code="locked-out",
        )
    else:
        response = render(
            request, "registration/locked_out.html", {"detail": lockout_detail()}, status=429
        )
    response["Retry-After"] = retry_after
    return response
