"""Failed-login limits (django-axes) in front of Django's ModelBackend."""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend


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
