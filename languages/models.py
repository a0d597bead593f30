from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class LanguagePreference(models.Model):
    """The language a customer chose on the pages.  It wins over the browser's
    Accept-Language while they are logged in, and e-mails and tickets sent to them by the
    workers use it."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="language_preference"
    )
    language = models.CharField(_("language"), max_length=8, choices=settings.LANGUAGES)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("language preference")
        verbose_name_plural = _("language preferences")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(language__in=[code for code, _name in settings.LANGUAGES]),
                name="language_preference_known_language",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} → {self.language}"
