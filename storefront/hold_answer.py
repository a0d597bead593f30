"""The 201 of a hold just made, built directly: the body `BookingDetailSerializer` gives for
it (before the renderer camelCases the keys), without DRF's field machinery.

A fresh hold is always the same case of the serializer: HELD, nothing paid, nothing closed,
its passengers the rows the hold itself wrote (`written_passengers`, bookings.holding) and
its sale read with its catalogue item.  Serialising that case field by field was about a
sixth of a winning hold's CPU (docs/performance.md, "Issue 26: the winning hold's answer").
`fresh_hold_answer` writes the same dict with plain attribute reads; for anything else it
answers None and the caller serialises as before.

The serializer stays the one description of a booking's answer (and the schema's source):
tests/storefront/test_hold_answer.py proves this function equal to it, key order and JSON
included, over random holds (seated and seatless, named or not, exit rows confirmed or not,
flights and events, booking classes, amounts, currencies, times and time zones), and shows a
builder that differs in one detail is caught.  A change to the serializer that this function
does not follow fails that test.
"""

from __future__ import annotations

import decimal
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone

from bookings import selectors
from bookings.models import Booking, BookingStatus
from kernel.web.id_urls import id_url as booking_url
from storefront.booking_serializers import name_what_is_sold, unconfirmed_exit_rows

_CENTS = Decimal("0.01")  # DecimalField(max_digits=12, decimal_places=2), as DRF quantizes it
_AMOUNT_DIGITS = 12


def fresh_hold_answer(booking: Booking) -> dict[str, Any] | None:
    """`BookingDetailSerializer(selectors.booking_just_written(booking=booking),
    context={"no_payments_yet": True}).data` for a HELD booking the current request has just
    written; None when `booking` did not come as the hold paths leave it (its written
    passengers and its sale with the catalogue item), or is not simply HELD."""
    passengers = getattr(booking, "written_passengers", None)
    if (
        passengers is None
        or booking.status != BookingStatus.HELD
        or booking.closed_at is not None
        or booking.confirmed_at is not None
        or not Booking.sale.is_cached(booking)
        or not selectors.sale_owner_cached(booking.sale)
    ):
        return None
    # In id order, as booking_just_written (and a read) gives them; the live ones while HELD.
    shown = booking.passengers_shown(sorted(passengers, key=_pk))
    seated = [(p, p.seat.seat_no if p.seat is not None else None) for p in shown]
    url = booking_url("bookings_api:passengers", booking.pk)
    unnamed = _unnamed(seated)
    unconfirmed = _unconfirmed_exit_rows(booking, [p for p, _ in seated])
    data: dict[str, Any] = {
        "booking_id": int(booking.pk),
        "status": str(BookingStatus.HELD.value),
        "customer_id": int(booking.customer_id),
        "fare_class": str(booking.fare_class),
        "booking_class": str(booking.booking_class),
        "seat_count": int(booking.seat_count),
        "seats": [seat_no for _, seat_no in seated if seat_no is not None],
        "passengers": [
            {"name": str(p.full_name), "seat": None if seat_no is None else str(seat_no)}
            for p, seat_no in seated
        ],
        "amount": _amount(booking.amount),
        "currency": str(booking.currency),
        "expires_at": _when(booking.expires_at),
        "created_at": _when(booking.created_at),
        "confirmed_at": None,
        "closed_at": None,
        "names_needed": bool(unnamed),
        "unnamed_passengers": unnamed,
        "name_passengers_url": url,
        "exit_row_confirmation_needed": bool(unconfirmed),
        "unconfirmed_exit_row_passengers": unconfirmed,
        "exit_row_confirmation_url": url if unconfirmed else None,
        "refunds": [],
    }
    name_what_is_sold(data, booking)
    return data


def _pk(passenger) -> int:
    return passenger.pk


def _unnamed(seated: list[tuple[Any, str | None]]) -> list[dict[str, Any]]:
    # BookingSerializer.find_unnamed: by seat, seatless last, then id; 1-based positions.
    in_order = sorted(seated, key=lambda ps: (ps[1] is None, ps[1] or "", ps[0].pk))
    return [
        {"passenger_id": p.pk, "position": position, "seat": seat_no}
        for position, (p, seat_no) in enumerate(in_order, start=1)
        if not p.full_name.strip()
    ]


def _unconfirmed_exit_rows(booking: Booking, passengers: list) -> list[dict[str, Any]]:
    # BookingSerializer.find_unconfirmed_exit_rows for a live booking (whose passengers shown
    # are its live ones), in id order.
    return unconfirmed_exit_rows(booking, passengers)


def _amount(value: Decimal) -> str:
    # DRF's DecimalField.to_representation: quantized in the thread's context at 12 digits.
    if not isinstance(value, Decimal):
        value = Decimal(str(value).strip())
    context = decimal.getcontext().copy()
    context.prec = _AMOUNT_DIGITS
    return f"{value.quantize(_CENTS, context=context):f}"


def _when(value: datetime | None) -> str | None:
    # DRF's DateTimeField.to_representation (ISO 8601, USE_TZ): in the current time zone,
    # "Z" for UTC.
    if not value:
        return None
    text = value.astimezone(timezone.get_current_timezone()).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def warm_up_urls() -> None:
    """The hold answer's URL templates, at a process's start (config/warmup.py): a name in a
    namespace is reversed on a resolver Django builds and fills on its first use (per
    namespace and language, 42 patterns), which each process's first hold did, ~4 ms with
    the process's other threads waiting on the GIL.  Only these names: filling every
    namespace in every language cost ~2.7 MB of heap per process (issue 26's RSS target)."""
    for name in ("bookings_api:detail", "bookings_api:passengers"):
        booking_url(name, 0)
