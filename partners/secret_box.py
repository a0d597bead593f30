"""Partner signing secrets at rest: sealed with Fernet (AES-128-CBC + HMAC-SHA256) under a
key derived (HKDF-SHA256) from `PARTNER_SECRETS_KEY`.

A database dump, a backup or a read-only SQL injection then gives no partner's secret; the
key lives in the environment only.  Production must set its own PARTNER_SECRETS_KEY (a start
refusal otherwise, config/checks.py): left derived from DJANGO_SECRET_KEY, rotating that key
would make every stored secret unreadable."""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

__all__ = ["InvalidToken", "open_sealed", "seal"]


def _fernet(key_material: str | None = None) -> Fernet:
    material = key_material if key_material is not None else settings.PARTNER_SECRETS_KEY
    key = HKDF(
        algorithm=hashes.SHA256(),
        length=32,
        salt=None,
        info=b"seatkeeper partner webhook secrets v1",
    ).derive(material.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def seal(secret: str, *, key_material: str | None = None) -> str:
    return _fernet(key_material).encrypt(secret.encode()).decode()


def open_sealed(token: str, *, key_material: str | None = None) -> str:
    """The secret inside `token`; InvalidToken if it was sealed under another key."""
    return _fernet(key_material).decrypt(token.encode()).decode()
