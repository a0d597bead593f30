"""Writes: remember a customer's language."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from languages.models import LanguagePreference


class UnknownLanguage(ValueError):
    pass


def set_preferred_language(*, user_id: int, language: str) -> LanguagePreference:
    if language not in dict(settings.LANGUAGES):
        raise UnknownLanguage(language)
    with transaction.atomic():
        preference, _created = LanguagePreference.objects.update_or_create(
            user_id=user_id, defaults={"language": language}
        )
    return preference
