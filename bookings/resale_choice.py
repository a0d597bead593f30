"""Which tickets a resale lists, and what they cost the seller (issue 29, item 4: a customer
may resell some of a booking's tickets).  Reads only; bookings.resale writes the listing.

A listing names the seller's passengers, one ticket each: the customer chooses tickets (what
they see), the engine hands over passengers' seats and units (what the inventory counts)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal

from django.utils.translation import gettext

from bookings.errors import NotForResale, NotYourTickets
from bookings.models import Booking, Passenger, Ticket, TicketStatus

CENT = Decimal("0.01")


def chosen_passengers(*, booking: Booking, ticket_ids: Sequence[int] | None) -> list[Passenger]:
    """The live passengers of `booking` (its row lock held) whose tickets are listed: all of
    them when `ticket_ids` is None, else those of the chosen tickets, each of which must be a
    valid ticket of this booking.  A used ticket can never be resold."""
    live = list(
        Passenger.objects.filter(booking=booking, is_live=True)
        .select_related("seat")
        .order_by("id")
    )
    tickets = {t.pk: t for t in Ticket.objects.filter(booking=booking)}
    if ticket_ids is None:
        if any(t.status == TicketStatus.USED for t in tickets.values()):
            raise NotForResale(gettext("A ticket of this booking was already used at the gate."))
        return live
    wanted = sorted(set(ticket_ids))
    unknown = [pk for pk in wanted if pk not in tickets]
    if not wanted or unknown:
        raise NotYourTickets(
            gettext("Choose at least one ticket of this booking.")
            if not wanted
            else gettext("Not tickets of this booking: %(ids)s.")
            % {"ids": ", ".join(map(str, unknown))}
        )
    by_id = {p.pk: p for p in live}
    spent = [
        tickets[pk]
        for pk in wanted
        if tickets[pk].status != TicketStatus.VALID or tickets[pk].passenger_id not in by_id
    ]
    if spent:
        raise NotForResale(
            gettext("These tickets were already used or revoked: %(serials)s.")
            % {"serials": ", ".join(t.serial for t in spent)}
        )
    return [by_id[tickets[pk].passenger_id] for pk in wanted]


def face_value(*, booking: Booking, listed: Sequence[Passenger]) -> Decimal:
    """What the `listed` passengers' tickets cost: the booking's fare shared equally, plus
    each listed seat's own surcharge.  All of them cost exactly `booking.amount`, so selling
    the tickets one by one never adds up to more than was paid."""
    live = list(Passenger.objects.filter(booking=booking, is_live=True).select_related("seat"))
    if {p.pk for p in listed} >= {p.pk for p in live}:
        return booking.amount

    def surcharges(passengers: Sequence[Passenger]) -> Decimal:
        return sum((p.seat.surcharge for p in passengers if p.seat), Decimal(0))

    fare_each = (booking.amount - surcharges(live)) / booking.seat_count
    face = fare_each * len(listed) + surcharges(listed)
    return min(face.quantize(CENT, rounding=ROUND_HALF_UP), booking.amount)


def fee_on(face: Decimal, *, fee_percent: Decimal) -> Decimal:
    return min((face * fee_percent / 100).quantize(CENT, rounding=ROUND_HALF_UP), face)
