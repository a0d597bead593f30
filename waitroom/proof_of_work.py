"""Proof-of-work before joining a room that requires it (issue 30, item 1; docs/security.md,
"Proof-of-work").

The server issues a challenge, signed with the room's key and bound to the account, the
room, a difficulty and an expiry; the page's script (static/js/scrypt.js) tries solutions
0, 1, 2, ... until scrypt(password = challenge, salt = solution) starts with `difficulty`
zero bits: about 2^difficulty tries of a memory-hard function (1 MiB each by default), so a
GPU gains far less over a phone than on a plain hash.  The server checks one try with
hashlib.scrypt and spends the challenge once (Redis SET NX until it expires).

The difficulty counts what the pre-queue shuffle cannot undo: how many places the joining
address's /24 (IPv6 /64) already holds in this room, or is about to (accounts of that prefix
holding an unspent challenge), one bit per doubling; plus bits for a new account and for an
unverified e-mail address.  Old, verified accounts are capped, so humans behind one carrier
NAT address pay a bounded price.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from accounts.selectors import has_verified_email
from kernel.web.client_ip import address_prefix
from waitroom import queue
from waitroom.errors import ProofOfWorkInvalid
from waitroom.models import QueueEntry, WaitingRoom

VERSION = "pow1"
SOLUTION = re.compile(r"[0-9]{1,12}")


@dataclass(frozen=True)
class Challenge:
    challenge: str
    difficulty: int
    expires_at: datetime
    scrypt: dict  # n, r, p, dkLen: what the page's script needs

    def wire(self) -> dict:
        """The body the API and the page's script get (camelCase already)."""
        return {
            "challenge": self.challenge,
            "difficulty": self.difficulty,
            "expiresAt": self.expires_at.isoformat(),
            "scrypt": self.scrypt,
        }


def scrypt_params() -> dict:
    limits = settings.WAITING_ROOM
    return {"n": limits["POW_SCRYPT_N"], "r": limits["POW_SCRYPT_R"], "p": 1, "dkLen": 32}


def work_of(challenge: str, solution: str) -> bytes:
    params = scrypt_params()
    return hashlib.scrypt(
        challenge.encode(),
        salt=solution.encode(),
        n=params["n"],
        r=params["r"],
        p=params["p"],
        dklen=params["dkLen"],
    )


def leading_zero_bits(digest: bytes) -> int:
    value = int.from_bytes(digest, "big")
    return len(digest) * 8 - value.bit_length()


def _sign(body: str) -> str:
    key = f"proof-of-work:{settings.WAITING_ROOM['SIGNING_KEY']}".encode()
    return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()


def difficulty_for(
    *, room: WaitingRoom, customer: AbstractBaseUser, prefix: str, now: datetime
) -> int:
    """The bits this account must pay to join this room from this prefix now."""
    limits = settings.WAITING_ROOM
    bits = limits["POW_BASE_BITS"]
    if prefix:
        held = (
            QueueEntry.objects.filter(room=room, joined_prefix=prefix)
            .exclude(customer_id=customer.pk)
            .count()
        )
        pending = queue.prefix_challengers(room.pk, prefix, excluding=customer.pk)
        # One bit per doubling of the places the prefix holds: the 2nd place costs twice
        # the 1st, the 40th about 64 times.
        bits += math.ceil(math.log2(1 + max(held, pending)))
    age = now - customer.date_joined
    verified = has_verified_email(customer)
    if age < timedelta(days=limits["POW_NEW_ACCOUNT_DAYS"]):
        bits += limits["POW_NEW_ACCOUNT_BITS"]
    if not verified:
        bits += limits["POW_UNVERIFIED_BITS"]
    if verified and age >= timedelta(days=limits["POW_TRUSTED_ACCOUNT_DAYS"]):
        bits = min(bits, limits["POW_TRUSTED_CAP_BITS"])
    return min(bits, limits["POW_MAX_BITS"])


def issue_challenge(
    *,
    room: WaitingRoom,
    customer: AbstractBaseUser,
    address: str | None,
    now: datetime | None = None,
) -> Challenge:
    """A fresh challenge for this account and room.  Its prefix is counted as about to hold
    one more place until it expires, so challenges fetched in parallel get harder too."""
    now = now or timezone.now()
    prefix = address_prefix(address)
    difficulty = difficulty_for(room=room, customer=customer, prefix=prefix, now=now)
    seconds = settings.WAITING_ROOM["POW_CHALLENGE_SECONDS"]
    expires_at = now + timedelta(seconds=seconds)
    body = ".".join(
        [
            VERSION,
            str(room.pk),
            str(customer.pk),
            str(difficulty),
            str(int(expires_at.timestamp())),
            secrets.token_hex(8),
        ]
    )
    if prefix:
        queue.note_challenger(room.pk, prefix, customer.pk, seconds=seconds)
    return Challenge(f"{body}.{_sign(body)}", difficulty, expires_at, scrypt_params())


def spend_proof(
    *,
    room: WaitingRoom,
    customer: AbstractBaseUser,
    challenge: str,
    solution: str,
    now: datetime | None = None,
) -> int:
    """Check a solved challenge and spend it; returns its difficulty.  Refused (400
    `proof-of-work-invalid`, nothing spent) if forged, for another account or room,
    expired, wrong, or already used."""
    now = now or timezone.now()
    fields = (challenge or "").split(".")
    if len(fields) != 7 or fields[0] != VERSION:
        raise ProofOfWorkInvalid("malformed")
    body, signature = ".".join(fields[:6]), fields[6]
    if not hmac.compare_digest(_sign(body), signature):
        raise ProofOfWorkInvalid("forged")
    _version, room_id, customer_id, difficulty, expires, nonce = fields[:6]
    if room_id != str(room.pk) or customer_id != str(customer.pk):
        raise ProofOfWorkInvalid("not yours")
    if int(expires) < now.timestamp():
        raise ProofOfWorkInvalid("expired")
    if not SOLUTION.fullmatch(solution or ""):
        raise ProofOfWorkInvalid("malformed")
    if leading_zero_bits(work_of(challenge, solution)) < int(difficulty):
        raise ProofOfWorkInvalid("wrong")
    # Last, so a wrong answer does not burn the challenge; atomic, so of two requests with
    # the same proof exactly one gets through.
    ttl = max(1, int(expires) - int(now.timestamp()) + 1)
    if not queue.spend_nonce(room.pk, nonce, seconds=ttl):
        raise ProofOfWorkInvalid("used")
    return int(difficulty)
