"""The language switcher: Django's set_language (a plain <form>, no JavaScript needed), which
for a logged-in customer also stores the choice as their preference."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST
from django.views.i18n import set_language as django_set_language

from languages.middleware import remember_in_session
from languages.services import set_preferred_language


@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    response = django_set_language(request)
    language = request.POST.get("language", "")
    if request.user.is_authenticated and language in dict(settings.LANGUAGES):
        set_preferred_language(user_id=request.user.pk, language=language)
        remember_in_session(request, user_id=request.user.pk, language=language)
    return response
