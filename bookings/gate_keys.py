"""The server side of the rotating codes: the sales' signing keys, certifying a ticket's
public key, and the codes the server signs for a page whose browser has no Ed25519.

**Keys are derived, not stored.**  A sale's Ed25519 key is
`HMAC-SHA256(TICKET_SIGNING_KEYS[key id], "sale-ed25519:<sale id>")` taken as the private
key's seed; a server-made ticket key is the same with `"ticket-ed25519:<certificate id>"`.
So no private key is in the database (a copied database or backup mints nothing), rotation
is the existing `TICKET_SIGNING_KEY_ID` / `TICKET_SIGNING_OLD_KEYS` (old key ids keep
verifying), and the secret is the one `config/checks.py` already refuses weak in production.
Gates get public keys only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from bookings.gate_codes import (
    BadGateCode,
    Certificate,
    VerifiedCode,
    b64,
    private_key_from_seed,
    raw_public_key,
    rotating_code,
    sign_certificate,
    step_at,
    unb64,
    verify_rotating_code,
)
from bookings.gate_errors import TicketKeyOnDevice, TicketNotLive
from bookings.models import KeyOrigin, Ticket, TicketCredential, TicketStatus


def step_seconds() -> int:
    return settings.TICKET_CODE_STEP_SECONDS


def skew_steps() -> int:
    return settings.TICKET_CODE_SKEW_STEPS


def _seed(key_id: str, label: str) -> bytes:
    secret = settings.TICKET_SIGNING_KEYS[key_id].encode()
    return hmac.new(secret, label.encode("ascii"), hashlib.sha256).digest()


def sale_signing_key(sale_id: int, key_id: str | None = None) -> Ed25519PrivateKey:
    return private_key_from_seed(
        _seed(key_id or settings.TICKET_SIGNING_KEY_ID, f"sale-ed25519:{sale_id}")
    )


def sale_public_keys(sale_id: int) -> dict[str, Ed25519PublicKey]:
    """Every key id that still verifies (the current one and the old ones) -> public key."""
    return {
        key_id: sale_signing_key(sale_id, key_id).public_key()
        for key_id in settings.TICKET_SIGNING_KEYS
    }


def _server_ticket_key(key_id: str, cert_id: str) -> Ed25519PrivateKey:
    return private_key_from_seed(_seed(key_id, f"ticket-ed25519:{cert_id}"))


def certify_ticket_key(
    *, ticket: Ticket, public_key: bytes | None
) -> tuple[TicketCredential, bool]:
    """Certify `public_key` (raw Ed25519, made on the customer's device) for `ticket`, or a
    key the server makes when `public_key` is None.  Returns (credential, created).

    The ticket keeps one current key: a new one supersedes the old (which gates then refuse
    after their next sync).  Sending the current device key again changes nothing.
    """
    now = timezone.now()
    with transaction.atomic():
        locked = Ticket.objects.select_for_update().get(pk=ticket.pk)
        if locked.status != TicketStatus.VALID:
            raise TicketNotLive(gettext("The ticket is used or revoked."))
        current = TicketCredential.objects.filter(
            sale_id=locked.sale_id, ticket=locked, superseded_at__isnull=True
        ).first()
        if (
            current is not None
            and public_key is not None
            and current.origin == KeyOrigin.DEVICE
            and current.public_key == b64(public_key)
        ):
            return current, False
        if current is not None:
            TicketCredential.objects.filter(pk=current.pk).update(superseded_at=now)
        key_id = settings.TICKET_SIGNING_KEY_ID
        cert_id = secrets.token_urlsafe(12)
        if public_key is None:
            origin, public_key = (
                KeyOrigin.SERVER,
                raw_public_key(_server_ticket_key(key_id, cert_id).public_key()),
            )
        else:
            origin = KeyOrigin.DEVICE
        certificate = sign_certificate(
            Certificate(
                key_id=key_id,
                cert_id=cert_id,
                sale_id=locked.sale_id,
                serial=locked.serial,
                public_key=public_key,
                seat_no=locked.seat_no,
                fare_class=locked.fare_class,
                holder=locked.passenger_name,
            ),
            sale_signing_key(locked.sale_id, key_id),
        )
        credential = TicketCredential.objects.create(
            sale_id=locked.sale_id,
            ticket=locked,
            cert_id=cert_id,
            key_id=key_id,
            public_key=b64(public_key),
            origin=origin,
            certificate=certificate,
            certified_at=now,
        )
        return credential, True


def server_signed_code(*, ticket: Ticket, now: float) -> tuple[str, int]:
    """(code, step) for the ticket's current server-made key at unix time `now`."""
    credential = TicketCredential.objects.filter(
        sale_id=ticket.sale_id, ticket=ticket, superseded_at__isnull=True
    ).first()
    if ticket.status != TicketStatus.VALID or credential is None:
        raise TicketNotLive(gettext("The ticket is used or revoked, or has no key yet."))
    if credential.origin != KeyOrigin.SERVER:
        raise TicketKeyOnDevice(gettext("The code is made on the phone that holds the ticket."))
    step = step_at(now, step_seconds())
    key = _server_ticket_key(credential.key_id, credential.cert_id)
    return rotating_code(credential.certificate, step, key), step


def verify_code_on_server(code: str, *, now: float) -> VerifiedCode:
    """The server's gate: the same verifier as an offline gate's, with the keys of the sale
    the certificate names (whether that is the gate's sale is the caller's question)."""
    try:
        body = code.strip().split(".")[1]
        sale_id = int(json.loads(unb64(body))["e"])
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        raise BadGateCode("not a rotating ticket code") from exc
    return verify_rotating_code(
        code,
        sale_keys=sale_public_keys(sale_id),
        now=now,
        skew_steps=skew_steps(),
        step_seconds=step_seconds(),
    )
