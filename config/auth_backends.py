"""Failed-login limits (django-axes) in front of Django's ModelBackend."""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend
from django.conf import settings


class LoginAttemptsBackend(AxesStandaloneBackend):
    """Refuses locked-out usernames and addresses on every web login: the token API, the
    site's login page and the admin's all call `authenticate(request, ...)`.

    A call without a request (a management command, the test client's `login()`) is not an
    attempt over the network, which is what the lockout defends against, so it is left to the
    next backend instead of raising axes' "request required" error.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def attempted_username(request, credentials: dict | None) -> str | None:
    """The username axes records and locks on.  No account name is longer than 150
    characters (Django's login form does not enforce that), and PostgreSQL refuses NUL: cut
    both, so a hostile username is counted like any other instead of failing with a 500."""
    source = credentials if credentials else getattr(request, "data", request.POST)
    username = source.get(settings.AXES_USERNAME_FORM_FIELD)
    if username is None:
        return None
    return str(username).replace("\x00", "")[:150]
