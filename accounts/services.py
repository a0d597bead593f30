"""Accounts' writes: sign up (within the per-address limit), send the verification link,
confirm an address from its link.

The verification link is sent by the request that asks for it, after the account's
transaction committed, as Django's own password reset sends its link: a lost message costs
the customer one click on "send me the link", so it needs no outbox row and no retry."""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from accounts import links
from accounts.errors import (
    EmailTaken,
    TooManyPasswordResets,
    TooManySignups,
    TooManyVerificationLinks,
    VerificationLinkInvalid,
)
from accounts.models import EmailAddress
from accounts.selectors import email_taken
from kernel.errors import InvalidRequest
from kernel.web.throttles import count_hit, parse_rate

logger = logging.getLogger(__name__)


def _over_limit(scope: str, ident: str, rate: str) -> int | None:
    """Count one more in this fixed window; the seconds to wait when over the rate.  The
    shared cache counts, so every web process sees one budget; when it does not answer the
    count fails open, like the API throttles (kernel/web/throttles.py)."""
    limit, period = parse_rate(rate)
    now = time.time()
    window = int(now // period)
    count = count_hit(f"accounts:{scope}:{ident}:{window}", period=period)
    if count is None or count <= limit:
        return None
    return max(1, int((window + 1) * period - now) + 1)


def _email_in_use() -> EmailTaken:
    return EmailTaken(gettext("An account with this e-mail address exists already."))


def sign_up(*, username: str, email: str, password: str, address: str | None) -> AbstractBaseUser:
    """Create a customer account and send the link that verifies its address.

    At most ACCOUNTS["SIGNUPS_PER_ADDRESS"] accounts per client address (`client_ip()`) and
    window: only accounts actually created count, so a mistyped form costs nothing.
    """
    if address:
        wait = _over_limit("signup", address, settings.ACCOUNTS["SIGNUPS_PER_ADDRESS"])
        if wait:
            raise TooManySignups(retry_after=wait)
    if email_taken(email):
        raise _email_in_use()
    try:
        with transaction.atomic():
            user = get_user_model().objects.create_user(
                username=username, email=email, password=password
            )
            EmailAddress.objects.create(user=user, email=email)
    except IntegrityError as exc:
        # Two sign-ups raced for one address (lower(email) is UNIQUE) or one username.
        raise _email_in_use() from exc
    transaction.on_commit(
        lambda: send_verification_link(user=user, email=email, count=False), robust=True
    )
    return user


def send_verification_link(
    *, user: AbstractBaseUser, email: str | None = None, count: bool = True
) -> str:
    """E-mail a fresh verification link for `email` (default: the account's address) and
    return the address.  Asked for by the customer (`count`), at most
    ACCOUNTS["VERIFICATION_LINKS_PER_ACCOUNT"] per window: each one is a mail we send."""
    email = email or user.email
    if not email:
        raise InvalidRequest(gettext("Enter the e-mail address to verify."))
    if email_taken(email, by_other_than=user.pk):
        raise _email_in_use()
    if count:
        rate = settings.ACCOUNTS["VERIFICATION_LINKS_PER_ACCOUNT"]
        wait = _over_limit("verification-link", str(user.pk), rate)
        if wait:
            raise TooManyVerificationLinks(retry_after=wait)
    token = links.make_token(user_id=user.pk, email=email)
    context = {
        "user": user,
        "link": settings.PUBLIC_BASE_URL.rstrip("/") + reverse("accounts:verify", args=[token]),
        "hours": int(settings.ACCOUNTS["VERIFICATION_LINK_MAX_AGE"].total_seconds() // 3600),
    }
    subject = render_to_string("emails/verify_email.subject.txt", context).strip()
    message = EmailMultiAlternatives(
        subject=subject,
        body=render_to_string("emails/verify_email.txt", context),
        to=[email],
    )
    message.attach_alternative(render_to_string("emails/verify_email.html", context), "text/html")
    try:
        message.send()
    except Exception:
        # The account is made; the customer can ask for another link from the page.
        logger.exception("verification link for user %s could not be sent", user.pk)
    return email


def confirm_email(*, token: str) -> AbstractBaseUser:
    """The verification link was opened: its address is the account's, verified.  Opening
    a good link again changes nothing."""
    claim = links.read_token(token)
    if claim is None:
        raise VerificationLinkInvalid()
    now = timezone.now()
    try:
        with transaction.atomic():
            user = get_user_model().objects.select_for_update().filter(pk=claim.user_id).first()
            if user is None:
                raise VerificationLinkInvalid()
            if email_taken(claim.email, by_other_than=user.pk):
                raise _email_in_use()
            record = EmailAddress.objects.filter(user=user).first()
            if record is None:
                EmailAddress.objects.create(user=user, email=claim.email, verified_at=now)
            elif record.email.lower() != claim.email.lower() or record.verified_at is None:
                record.email, record.verified_at = claim.email, now
                record.save(update_fields=["email", "verified_at"])
            if user.email != claim.email:
                user.email = claim.email
                user.save(update_fields=["email"])
    except IntegrityError as exc:
        raise _email_in_use() from exc
    return user


def record_verified_email(*, user: AbstractBaseUser) -> None:
    """Staff tools and the demo: the account's current address counts as verified."""
    with transaction.atomic():
        EmailAddress.objects.update_or_create(
            user=user, defaults={"email": user.email, "verified_at": timezone.now()}
        )


def check_password_reset_budget(*, address: str | None) -> None:
    """A reset mail goes to whatever address is typed: bound how many one client sends."""
    if not address:
        return
    wait = _over_limit("password-reset", address, settings.ACCOUNTS["PASSWORD_RESETS_PER_ADDRESS"])
    if wait:
        raise TooManyPasswordResets(retry_after=wait)
