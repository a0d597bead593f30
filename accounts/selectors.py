from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from accounts.models import EmailAddress


def has_verified_email(user: AbstractBaseUser) -> bool:
    """True while the account's own address (`User.email`, where mail goes) is the one it
    verified."""
    email = getattr(user, "email", "")
    if not email or not user.is_authenticated:
        return False
    return EmailAddress.objects.filter(
        user_id=user.pk, email__iexact=email, verified_at__isnull=False
    ).exists()


def email_taken(email: str, *, by_other_than: int | None = None) -> bool:
    """Whether another account already uses `email`, ignoring case (as the UNIQUE index does)."""
    users = get_user_model().objects.filter(email__iexact=email)
    addresses = EmailAddress.objects.filter(email__iexact=email)
    if by_other_than is not None:
        users = users.exclude(pk=by_other_than)
        addresses = addresses.exclude(user_id=by_other_than)
    return users.exists() or addresses.exists()
