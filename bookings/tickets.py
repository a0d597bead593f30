"""Tickets: issued when a booking is confirmed, revoked when it is cancelled, used once at
the gate."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import models, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from bookings import catalogue
from bookings.errors import ExitRowNotConfirmed
from bookings.gate_codes import BadGateCode, StaleGateCode, is_rotating_code
from bookings.gate_keys import verify_code_on_server
from bookings.models import (
    Booking,
    BookingStatus,
    Passenger,
    Sale,
    SaleKind,
    Ticket,
    TicketCredential,
    TicketStatus,
)
from bookings.ticket_codes import BadTicketCode, TicketContent, sign_ticket, verify_ticket_code
from kernel.compiled import CompiledRead


def issue_tickets(*, booking_id: int) -> list[Ticket]:
    """One ticket per passenger of a CONFIRMED booking; returns all of the booking's tickets.

    Idempotent: passengers who already have a ticket keep it (one ticket per passenger is
    also a database constraint).
    """
    with transaction.atomic(savepoint=False):
        booking = ensure_tickets(booking_id=booking_id)
        return [] if booking is None else list(booking.tickets.order_by("id"))


def ensure_tickets(*, booking_id: int, with_customer: bool = False) -> Booking | None:
    """`issue_tickets` for callers that need the booking rather than the list of its tickets
    (the outbox's consumers): returns the CONFIRMED booking it locked, its customer read in
    the same statement when `with_customer`, or None (no such booking, or not confirmed).
    The list's re-read and the e-mail's second read of the booking are not made: three
    statements fewer per confirmation (issue 26)."""
    now = timezone.now()
    # Inside the caller's transaction (the outbox consumer's savepoint, which already rolls
    # back alone) it needs no savepoint of its own: two round trips fewer per call, two
    # calls per confirmation (issue 26).  Called outside one, it is its own transaction.
    with transaction.atomic(savepoint=False):
        lock = _LOCK_WITH_CUSTOMER if with_customer else _LOCK
        booking = lock.first(booking_id=booking_id)
        if booking is None or booking.status != BookingStatus.CONFIRMED:
            return None
        passengers = _UNTICKETED.list(booking_id=booking_id)
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
        return booking


# Compiled once (kernel.compiled): two confirmations' consumers run these for every booking.
_LOCK = CompiledRead(
    Booking,
    lambda booking_id: Booking.objects.select_for_update().filter(pk=booking_id).order_by()[:1],
    booking_id=int,
)
# The customer is read, not locked: FOR UPDATE OF the booking.
_LOCK_WITH_CUSTOMER = CompiledRead(
    Booking,
    lambda booking_id: (
        Booking.objects.select_related("customer")
        .select_for_update(of=("self",))
        .filter(pk=booking_id)
        .order_by()[:1]
    ),
    booking_id=int,
)
_UNTICKETED = CompiledRead(
    Passenger,
    lambda booking_id: (
        Passenger.objects.filter(booking_id=booking_id, is_live=True, ticket__isnull=True)
        .select_related("seat")
        .order_by("id")
    ),
    booking_id=int,
)


def revoke_tickets(*, booking_id: int) -> int:
    """Revoke the booking's unused tickets; returns how many this call revoked."""
    now = timezone.now()
    with transaction.atomic():
        return Ticket.objects.filter(booking_id=booking_id, status=TicketStatus.VALID).update(
            status=TicketStatus.REVOKED, revoked_at=now
        )


def is_void(ticket: Ticket) -> bool:
    """Whether `ticket` admits no one any more: revoked, or its booking closed and the
    revocation is still on its way through the outbox.  Its PDF and page say VOID."""
    return ticket.status == TicketStatus.REVOKED or ticket.booking.status != BookingStatus.CONFIRMED


# --- gate check-in -----------------------------------------------------------------------------


class ScanOutcome(models.TextChoices):
    VALID = "valid", _("Valid: board")
    FORGED = "forged", _("Forged or unreadable code")
    REVOKED = "revoked", _("Ticket revoked")
    ALREADY_USED = "already_used", _("Ticket already used")
    WRONG_FLIGHT = "wrong_flight", _("Ticket is for another flight")
    WRONG_EVENT = "wrong_event", _("Ticket is for another event")
    # Rotating codes (bookings.gate_codes): signed right, but for a time step outside the
    # window (a screenshot, or a phone clock far off); or on a key the ticket replaced.
    EXPIRED_CODE = "expired_code", _("Code expired: show the live ticket, not a picture")
    SUPERSEDED = "superseded", _("This ticket was moved to another phone")
    # A seat with conditions (a flight's exit row) whose passenger never confirmed them: not
    # boarded, the ticket stays valid; the agent asks, and scans again confirming them.
    CONDITIONS_UNCONFIRMED = "conditions_unconfirmed", _("Exit-row conditions not confirmed")


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
        if self.outcome == ScanOutcome.CONDITIONS_UNCONFIRMED and self.ticket:
            return _(
                "Seat %(seat)s is in an exit row and its conditions were never confirmed. Ask "
                "the passenger: if they are 15 or older and able and willing to help in an "
                "evacuation, tick “Conditions confirmed with the passenger” and board them; "
                "otherwise give them another seat."
            ) % {"seat": self.ticket.seat_no}
        if self.outcome in WRONG_SALE.values() and self.ticket:
            return _("This ticket is for %(sale)s.") % {
                "sale": catalogue.describe(self.ticket.sale).title
            }
        return str(self.outcome.label)


def scan_ticket(
    *,
    code: str,
    sale_id: int,
    scanned_by: AbstractBaseUser,
    conditions_confirmed: bool = False,
    now: datetime | None = None,
) -> ScanResult:
    """Check a code scanned at the gate of `sale_id` (a flight boarding, an event letting
    people in); a valid ticket is marked used, once.  A ticket of any other sale is refused
    and stays valid.

    A seat with conditions (a flight's exit row) boards only a passenger who confirmed them,
    by the catalogue's one rule (`flights.rules.require_exit_row_confirmation`): before (the
    hold, naming, online check-in) or now, the agent confirming them with the passenger
    (`conditions_confirmed`, recorded on the passenger with the boarding, in one
    transaction).  Otherwise `conditions_unconfirmed`, and the ticket stays valid.

    The signature is checked before the database is asked, so forged codes cost nothing.
    Two scans of one code at the same moment race on a conditional UPDATE: one wins
    "valid", the other reads the row afterwards and answers "already used".

    Two kinds of code: the static one printed on the PDF (`SK1`, HMAC) and the rotating one
    of the ticket page (`SKR1`, Ed25519, bookings.gate_codes), checked with the offline
    gates' verifier and the server's clock.
    """
    now = now or timezone.now()
    ticket, refusal = _ticket_of_code(code, now=now)
    if ticket is None:
        return ScanResult(refusal or ScanOutcome.FORGED)
    if refusal is not None:
        return ScanResult(refusal, ticket)
    if ticket.sale_id != sale_id:
        gate_kind = Sale.objects.filter(pk=sale_id).values_list("kind", flat=True).first()
        return ScanResult(WRONG_SALE.get(gate_kind, ScanOutcome.WRONG_FLIGHT), ticket)
    if ticket.booking.status != BookingStatus.CONFIRMED:
        # The booking closed and its revocation is still on its way through the outbox.
        return ScanResult(ScanOutcome.REVOKED, ticket)
    if ticket.status == TicketStatus.VALID and not _seat_conditions_met(
        ticket, confirmed_now=conditions_confirmed
    ):
        return ScanResult(ScanOutcome.CONDITIONS_UNCONFIRMED, ticket)
    with transaction.atomic():
        won = Ticket.objects.filter(pk=ticket.pk, status=TicketStatus.VALID).update(
            status=TicketStatus.USED, used_at=now, used_by=scanned_by
        )
        if won and conditions_confirmed:
            Passenger.objects.filter(
                pk=ticket.passenger_id, seat_conditions_confirmed_at__isnull=True
            ).update(seat_conditions_confirmed_at=now)
    ticket.refresh_from_db(fields=["status", "used_at", "used_by", "revoked_at"])
    if won:
        return ScanResult(ScanOutcome.VALID, ticket)
    if ticket.status == TicketStatus.USED:
        return ScanResult(ScanOutcome.ALREADY_USED, ticket)
    return ScanResult(ScanOutcome.REVOKED, ticket)


def _seat_conditions_met(ticket: Ticket, *, confirmed_now: bool) -> bool:
    """Whether the ticket's seat carries no conditions, or its passenger confirmed them
    (stored: it stands for this seat, since a seat change clears it; or `confirmed_now`)."""
    if not ticket.seat_no:
        return True
    confirmed = confirmed_now or ticket.passenger.seat_conditions_confirmed_at is not None
    try:
        catalogue.require_seat_conditions(ticket.sale_id, [ticket.seat_no], confirmed=confirmed)
    except ExitRowNotConfirmed:
        return False
    return True


def _ticket_of_code(code: str, *, now: datetime) -> tuple[Ticket | None, ScanOutcome | None]:
    """The ticket a code names, and why it is refused before its state is even asked (None:
    not refused yet).  No ticket: forged, or an expired rotating code."""
    tickets = Ticket.objects.select_related(
        "booking", "passenger", "sale", *catalogue.owner_paths("sale__")
    )
    if not is_rotating_code(code):
        try:
            content = verify_ticket_code(code)
        except BadTicketCode:
            return None, ScanOutcome.FORGED
        # None: signed by us but never issued (a leaked key, or another installation).
        # The serial is unique per sale: the signed content names its sale.
        found = tickets.filter(sale_id=content.sale_id, serial=content.serial, code=code.strip())
        return found.first(), None
    try:
        cert = verify_code_on_server(code, now=now.timestamp()).certificate
    except StaleGateCode:
        return None, ScanOutcome.EXPIRED_CODE
    except BadGateCode:
        return None, ScanOutcome.FORGED
    ticket = tickets.filter(serial=cert.serial, sale_id=cert.sale_id).first()
    if ticket is None:
        return None, ScanOutcome.FORGED
    current = TicketCredential.objects.filter(
        sale_id=ticket.sale_id, ticket=ticket, cert_id=cert.cert_id, superseded_at__isnull=True
    ).exists()
    return ticket, None if current else ScanOutcome.SUPERSEDED
