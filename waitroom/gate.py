"""One rule, one place each: who may hold on a sale behind a waiting room, and who may wait
for it.

Every hold entry point (the REST API and the seat-picker form) calls `require_admission`
before calling the hold service.  The token travels in the `X-Waiting-Room-Token` header
(API clients) or in the `waiting_room_<room id>` cookie the queue page sets on entry
(pages; the API accepts it too, behind its usual session + CSRF rules).

Freed units go to a sale's waitlist before its queue, so the waitlist is a way in too:
`require_queue_place_for_waitlist` is registered with the engine's `join_waitlist`
(waitroom.apps), which every waitlist door calls, so no door can skip it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone
from django.utils.translation import gettext

from bookings import admission_reads
from waitroom import protection, room_selectors, safety_net
from waitroom.errors import WaitingRoomRequired
from waitroom.models import QueueStatus, WaitingRoom
from waitroom.protection import cached_room_of_sale
from waitroom.tokens import check_token, read_token

TOKEN_HEADER = "X-Waiting-Room-Token"


def cookie_name(room_id: int) -> str:
    return f"waiting_room_{room_id}"


def require_admission(
    *, request, customer_id: int, sale_id: int, now: datetime | None = None
) -> None:
    """Raise WaitingRoomRequired (403, with the queue's URL) unless the engine's sale
    `sale_id` (a flight's, an event's) has no waiting room or the request carries a live
    token for this customer and its room.  Whether the sale has a room comes from the
    cache (one Redis round trip, waitroom/protection.py; the database when Redis is down);
    the token itself is checked by HMAC, without Redis or the database.  Only without a
    valid token is the safety net asked (`waitroom.safety_net`: one query, and a Redis count
    while dormant)."""
    _require_admission_to(
        cached_room_of_sale(sale_id=sale_id),
        request=request,
        customer_id=customer_id,
        now=now,
    )


@contextmanager
def admission_with_the_hold(*, request, customer_id: int, sale_id: int) -> Iterator[None]:
    """`require_admission` for the hold the block makes, with the protection read riding in
    the hold filters' first round trip (bookings.admission_reads): decided before the hold
    can commit, with no round trip of its own.  Where it cannot ride, it reads as
    `require_admission` does, at the same point."""
    keys = protection.read_keys(sale_id=sale_id)
    if keys is None:
        require_admission(request=request, customer_id=customer_id, sale_id=sale_id)
        yield
        return

    def judge(values: list[bytes | None] | None) -> None:
        room_id = cached_room_of_sale(sale_id=sale_id, read=values)
        _require_admission_to(room_id, request=request, customer_id=customer_id, now=None)

    with admission_reads.riding(admission_reads.Rider(keys=keys, judge=judge)):
        yield


def _require_admission_to(
    room_id: int | None, *, request, customer_id: int, now: datetime | None
) -> None:
    if room_id is None:
        return
    # Tokens, cookies and queue URLs name the room (`room_id`), never the engine's sale.
    token = request.headers.get(TOKEN_HEADER) or request.COOKIES.get(cookie_name(room_id))
    valid, reason = check_token(
        token, room_id=room_id, customer_id=customer_id, now=now or timezone.now()
    )
    if not valid and not safety_net.lets_through(
        room_id=room_id, customer_id=customer_id, now=now or timezone.now()
    ):
        raise WaitingRoomRequired(room_id=room_id, reason=reason)


def admitted_until(
    *, request, customer_id: int | None, sale_id: int, now: datetime | None = None
) -> datetime | None:
    """When this shopper's turn on a protected sale ends (pages show the time left, as holds
    do); None for a sale without a waiting room.  Raises WaitingRoomRequired, as
    `require_admission` does, when they were not let in."""
    require_admission(request=request, customer_id=customer_id, sale_id=sale_id, now=now)
    room_id = cached_room_of_sale(sale_id=sale_id)
    if room_id is None:
        return None
    token = request.headers.get(TOKEN_HEADER) or request.COOKIES.get(cookie_name(room_id))
    claims = read_token(token)
    return claims.expires_at if claims is not None else None


def require_queue_place_for_waitlist(
    *, customer: AbstractBaseUser, sale_id: int, now: datetime
) -> None:
    """Raise WaitingRoomRequired unless the engine's sale `sale_id` has no waiting room
    or `customer` is in its queue: let in (admission not over), or waiting and told a seat is
    unlikely.  Anyone else would be served freed units ahead of the whole queue."""
    room_id = cached_room_of_sale(sale_id=sale_id)
    if room_id is None:
        return
    room = WaitingRoom.objects.filter(pk=room_id).first()
    if room is not None:
        place = room_selectors.queue_status(room=room, customer_id=customer.pk, now=now)
        if place["status"] == QueueStatus.ADMITTED or (
            place["status"] == QueueStatus.WAITING and place.get("unlikely")
        ):
            return
    raise WaitingRoomRequired(
        room_id=room_id,
        reason=gettext(
            "only people in its queue (let in, or told a seat is unlikely) may join its waitlist."
        ),
    )
