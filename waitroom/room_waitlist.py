"""The waiting room's one-click waitlist: for those told early, beyond the inventory horizon,
that a seat is unlikely.  (The rule that only people in the queue may wait at all is
`waitroom.gate.require_queue_place_for_waitlist`, asked by the engine on every join.)"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils.translation import gettext

from bookings import catalogue, waitlist
from bookings.models import WaitlistEntry
from kernel.errors import InvalidRequest
from waitroom import room_selectors
from waitroom.errors import NotBeyondHorizon, NotInQueue, RoomNotFound
from waitroom.models import QueueStatus, WaitingRoom


def join_waitlist_from_queue(
    *, room_id: int, customer: AbstractBaseUser, fare_class: str | None, party_size: int
) -> WaitlistEntry:
    """The one-click waitlist join offered to those beyond the inventory horizon.  It is
    allowed while units are still on sale (they are all spoken for by people ahead), and
    the queue place is kept; once the sale is sold out, to everyone waiting.  `fare_class`
    is one of the room's sale's own classes (a flight's fare class, an event's category);
    None: its catalogue's default, if it has one."""
    room = WaitingRoom.objects.select_related("sale").filter(pk=room_id).first()
    if room is None:
        raise RoomNotFound(f"There is no waiting room {room_id}.")
    codes = [code for code, _label in room_selectors.waitlist_classes(room=room)]
    fare_class = (fare_class or "").strip().upper() or catalogue.default_class(room.sale.kind)
    if fare_class not in codes:
        raise InvalidRequest(
            gettext("Choose what to wait for: one of %(codes)s.") % {"codes": ", ".join(codes)},
            field="fareClass",
        )
    status = room_selectors.queue_status(room=room, customer_id=customer.pk)
    if status["status"] != QueueStatus.WAITING:
        raise NotInQueue("Only people waiting in the queue can use this.")
    if not (status["unlikely"] or status.get("soldOut")):
        raise NotBeyondHorizon(
            "Seats are still likely to reach your place in the queue: keep your place."
        )
    return waitlist.join_waitlist(
        customer=customer,
        sale_id=room.sale_id,
        fare_class=fare_class,
        party_size=party_size,
        require_sold_out=False,
    )
