"""Tickets: issued when a booking is confirmed, revoked when it is cancelled, used once at
the gate."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import models, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from bookings import catalogue
from bookings.models import Booking, BookingStatus, Sale, SaleKind, Ticket, TicketStatus
from bookings.ticket_codes import BadTicketCode, TicketContent, sign_ticket, verify_ticket_code


def issue_tickets(*, booking_id: int) -> list[Ticket]:
    """One ticket per passenger of a CONFIRMED booking; returns all of the booking's tickets.

    Idempotent: passengers who already have a ticket keep it (one ticket per passenger is
    also a database constraint).
    """
    now = timezone.now()
    with transaction.atomic():
        booking = Booking.objects.select_for_update().filter(pk=booking_id).first()
        if booking is None or booking.status != BookingStatus.CONFIRMED:
            return []
        passengers = (
            booking.passengers.filter(is_live=True, ticket__isnull=True)
            .select_related("seat")
            .order_by("id")
        )
        new = []
        for passenger in passengers:
            content = TicketContent(
                serial=secrets.token_urlsafe(12),
                sale_id=booking.sale_id,
                seat_no=passenger.seat.seat_no if passenger.seat else "",
                fare_class=booking.fare_class,
                passenger_name=passenger.full_name,
            )
            new.append(
                Ticket(
                    booking=booking,
                    passenger=passenger,
                    sale_id=booking.sale_id,
                    serial=content.serial,
                    code=sign_ticket(content),
                    passenger_name=content.passenger_name,
                    seat_no=content.seat_no,
                    fare_class=content.fare_class,
                    status=TicketStatus.VALID,
                    issued_at=now,
                )
            )
        Ticket.objects.bulk_create(new)
        return list(booking.tickets.order_by("id"))


def revoke_tickets(*, booking_id: int) -> int:
    """Revoke the booking's unused tickets; returns how many this call revoked."""
    now = timezone.now()
    with transaction.atomic():
        return Ticket.objects.filter(booking_id=booking_id, status=TicketStatus.VALID).update(
            status=TicketStatus.REVOKED, revoked_at=now
        )


# --- gate check-in -----------------------------------------------------------------------------


class ScanOutcome(models.TextChoices):
    VALID = "valid", _("Valid: board")
    FORGED = "forged", _("Forged or unreadable code")
    REVOKED = "revoked", _("Ticket revoked")
    ALREADY_USED = "already_used", _("Ticket already used")
    WRONG_FLIGHT = "wrong_flight", _("Ticket is for another flight")
    WRONG_EVENT = "wrong_event", _("Ticket is for another event")


# What a gate of each kind of sale says to a ticket of another sale.
WRONG_SALE = {SaleKind.FLIGHT: ScanOutcome.WRONG_FLIGHT, SaleKind.EVENT: ScanOutcome.WRONG_EVENT}


@dataclass(frozen=True)
class ScanResult:
    outcome: ScanOutcome
    ticket: Ticket | None = None

    @property
    def message(self) -> str:
        if self.outcome == ScanOutcome.ALREADY_USED and self.ticket and self.ticket.used_at:
            return _("Ticket already used at %(time)s UTC.") % {
                "time": f"{self.ticket.used_at:%H:%M:%S}"
            }
        if self.outcome in WRONG_SALE.values() and self.ticket:
            return _("This ticket is for %(sale)s.") % {
                "sale": catalogue.describe(self.ticket.sale).title
            }
        return str(self.outcome.label)


def scan_ticket(*, code: str, sale_id: int, scanned_by: AbstractBaseUser) -> ScanResult:
    """Check a code scanned at the gate of `sale_id` (a flight boarding, an event letting
    people in); a valid ticket is marked used, once.  A ticket of any other sale is refused
    and stays valid.

    The signature is checked before the database is asked, so forged codes cost nothing.
    Two scans of one code at the same moment race on a conditional UPDATE: one wins
    "valid", the other reads the row afterwards and answers "already used".
    """
    try:
        content = verify_ticket_code(code)
    except BadTicketCode:
        return ScanResult(ScanOutcome.FORGED)
    ticket = (
        Ticket.objects.select_related("booking", "sale", *catalogue.owner_paths("sale__"))
        .filter(serial=content.serial, code=code.strip())
        .first()
    )
    if ticket is None:  # signed by us but never issued: a leaked key, or another installation
        return ScanResult(ScanOutcome.FORGED)
    if ticket.sale_id != sale_id:
        gate_kind = Sale.objects.filter(pk=sale_id).values_list("kind", flat=True).first()
        return ScanResult(WRONG_SALE.get(gate_kind, ScanOutcome.WRONG_FLIGHT), ticket)
    if ticket.booking.status != BookingStatus.CONFIRMED:
        # The booking closed and its revocation is still on its way through the outbox.
        return ScanResult(ScanOutcome.REVOKED, ticket)
    now = timezone.now()
    with transaction.atomic():
        won = Ticket.objects.filter(pk=ticket.pk, status=TicketStatus.VALID).update(
            status=TicketStatus.USED, used_at=now, used_by=scanned_by
        )
    ticket.refresh_from_db(fields=["status", "used_at", "used_by", "revoked_at"])
    if won:
        return ScanResult(ScanOutcome.VALID, ticket)
    if ticket.status == TicketStatus.USED:
        return ScanResult(ScanOutcome.ALREADY_USED, ticket)
    return ScanResult(ScanOutcome.REVOKED, ticket)
