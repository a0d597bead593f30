from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LanguagesConfig(AppConfig):
    """The customer's language (a stored preference) and locale-aware money and dates."""

    name = "languages"
    verbose_name = _("Languages")
