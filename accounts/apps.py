from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    """Customer accounts: sign-up (with its per-address limit), the e-mail address and its
    verification link.  Below the waiting room, which asks it whether an address is verified."""

    name = "accounts"
    verbose_name = _("Accounts")
