from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy as _


class EmailAddress(models.Model):
    """The address an account signed up with (or later asked to verify), and when its owner
    proved they read it by opening the signed link we sent there.

    One address per account, and one account per address whatever its case: a UNIQUE index
    on lower(email), so two sign-ups racing with "Ana@x" and "ana@x" cannot both win.  The
    account's `User.email` is the address mail goes to; it is verified only while it is the
    address recorded here with `verified_at` set (`accounts.selectors.has_verified_email`).
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="email_address"
    )
    email = models.EmailField(_("e-mail address"), max_length=254)
    verified_at = models.DateTimeField(_("verified at"), null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("e-mail address")
        verbose_name_plural = _("e-mail addresses")
        constraints = [
            models.UniqueConstraint(Lower("email"), name="email_address_unique_ignoring_case")
        ]

    def __str__(self) -> str:
        return f"{self.email} ({'verified' if self.verified_at else 'not verified'})"
