"""Reads: which language a customer reads."""

from __future__ import annotations

from django.conf import settings

from languages.models import LanguagePreference


def preferred_language(*, user_id: int) -> str | None:
    """The language the customer chose on the pages, or None if they never chose."""
    return (
        LanguagePreference.objects.filter(user_id=user_id)
        .values_list("language", flat=True)
        .first()
    )


def language_for_customer(*, user_id: int) -> str:
    """The language to write to a customer in when no request says (e-mails, tickets sent by
    the workers): their preference, else the site's default."""
    return preferred_language(user_id=user_id) or settings.LANGUAGE_CODE
