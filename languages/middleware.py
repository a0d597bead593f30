"""A logged-in customer's stored language wins over Accept-Language and the language cookie.

Runs after Django's LocaleMiddleware (which read Accept-Language or the cookie).  The stored
preference is looked up once per session and kept in the session, so a page costs no extra
query; the switcher (languages.views.set_language) updates both.
"""

from __future__ import annotations

from django.db import DatabaseError
from django.utils import translation

from languages.selectors import preferred_language

SESSION_KEY = "_preferred_language"


def remember_in_session(request, *, user_id: int, language: str | None) -> None:
    request.session[SESSION_KEY] = [user_id, language or ""]


class PreferredLanguageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            language = self._stored_language(request)
        except DatabaseError:
            # The preference is a nicety: during a database outage the page goes on in the
            # browser's language, and the view's own query meets the outage inside the
            # middleware that answers "back in a moment" (503), as it did before.
            language = None
        if language:
            translation.activate(language)
            request.LANGUAGE_CODE = language
        return self.get_response(request)

    @staticmethod
    def _stored_language(request) -> str | None:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        cached = request.session.get(SESSION_KEY)
        if cached and cached[0] == user.pk:
            return cached[1] or None
        language = preferred_language(user_id=user.pk)
        remember_in_session(request, user_id=user.pk, language=language)
        return language
