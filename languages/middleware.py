"""The request's language: Accept-Language or the language cookie (`LocaleMiddleware`), and a
logged-in customer's stored language, which wins over both (`PreferredLanguageMiddleware`).

`PreferredLanguageMiddleware` runs after `LocaleMiddleware`.  The stored preference is looked
up once per session and kept in the session, so a page costs no extra query; the switcher
(languages.views.set_language) updates both.
"""

from __future__ import annotations

from django.conf import settings
from django.conf.urls.i18n import is_language_prefix_patterns_used
from django.db import DatabaseError
from django.middleware import locale
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.deprecation import MiddlewareMixin

from languages.selectors import preferred_language

SESSION_KEY = "_preferred_language"


def remember_in_session(request, *, user_id: int, language: str | None) -> None:
    request.session[SESSION_KEY] = [user_id, language or ""]


class LocaleMiddleware(locale.LocaleMiddleware):
    """Django's, without its work for language-prefixed URLs when the URLconf has none (ours
    has no `i18n_patterns`): Django looks the path up for a language prefix twice per
    request, and without such patterns the answer changes nothing (issue 26).  A URLconf
    with them gets Django's own middleware, unchanged."""

    @staticmethod
    def _prefixed_urls(request) -> bool:
        urlconf = getattr(request, "urlconf", settings.ROOT_URLCONF)
        return is_language_prefix_patterns_used(urlconf)[0]  # cached per URLconf

    def process_request(self, request):
        if self._prefixed_urls(request):
            return super().process_request(request)
        translation.activate(translation.get_language_from_request(request))
        request.LANGUAGE_CODE = translation.get_language()
        return None

    def process_response(self, request, response):
        if self._prefixed_urls(request):
            return super().process_response(request, response)
        patch_vary_headers(response, ("Accept-Language",))
        response.headers.setdefault("Content-Language", translation.get_language())
        return response


# Hook-style (process_request only), so that the lean API chain can merge it with its
# neighbours (config/lean_chain.py); what it does is unchanged.
class PreferredLanguageMiddleware(MiddlewareMixin):
    def process_request(self, request):
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
        return None

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
