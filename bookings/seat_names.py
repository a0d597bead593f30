"""Seats as people name them: "Parkett, row 1, seat 1" for a venue seat, "seat 12A" in a
cabin.  The engine's codes ("1-1-1") stay the API's; pages speak these."""

from __future__ import annotations

from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from bookings.errors import SeatBlocked, SeatUnavailable
from bookings.models import Seat
from bookings.templatetags.sales import seat_words
from kernel.errors import DomainError


def seat_name(seat: Seat) -> str:
    if seat.section and seat.number is not None:
        return seat_words(section=seat.section, row=seat.row_label or seat.row, number=seat.number)
    return _("seat %(seat)s") % {"seat": seat.seat_no}


def seat_names(*, sale_id: int, seat_nos: list[str]) -> list[str]:
    """The names of `seat_nos` in the order given; a code the sale does not have stays as is."""
    seats = {s.seat_no: s for s in Seat.objects.filter(sale_id=sale_id, seat_no__in=seat_nos)}
    return [seat_name(seats[no]) if no in seats else no for no in seat_nos]


def refusal_text(error: DomainError, *, sale_id: int | None) -> str:
    """The page's message for `error`: a seat refusal names the seats as people do."""
    seat_nos = error.extra.get("seats") if isinstance(error, SeatUnavailable) else None
    if not seat_nos or sale_id is None:
        return f"{error.title}. {error.detail}"
    names = "; ".join(seat_names(sale_id=sale_id, seat_nos=list(seat_nos)))
    if isinstance(error, SeatBlocked):
        detail = ngettext(
            "%(seats)s is not for sale. Please pick another seat.",
            "%(seats)s are not for sale. Please pick other seats.",
            len(seat_nos),
        )
    else:
        detail = ngettext(
            "%(seats)s was just taken by someone else. Please pick another seat.",
            "%(seats)s were just taken by someone else. Please pick other seats.",
            len(seat_nos),
        )
    return f"{error.title}. {capfirst(detail % {'seats': names})}"
