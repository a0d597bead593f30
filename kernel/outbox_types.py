"""Every outbox event type, in one enum (Sentry's `OutboxCategory`): emitters, consumers and
partners' subscriptions name a type by its member, never by a free string.

The values are the wire names (partners' webhook `type`, the event log's `eventType`).  Each
type has one payload builder in the app that owns it: `bookings.outbox_payloads` (bookings,
seats, waitlist offers) and `payments.outbox_payloads` (refunds); docs/partners.md lists the
fields partners receive.
"""

from __future__ import annotations

from django.db import models


class OutboxEventType(models.TextChoices):
    BOOKING_CONFIRMED = "booking.confirmed", "Booking confirmed"
    BOOKING_EXPIRED = "booking.expired", "Hold expired"
    BOOKING_CANCELLED = "booking.cancelled", "Booking cancelled"
    SEATS_RELEASED = "seats.released", "Seats released"
    WAITLIST_OFFERED = "waitlist.offered", "Waitlist offer made"
    REFUND_ISSUED = "refund.issued", "Refund issued"
    # Resale through the waitlist (bookings.resale): listed, withdrawn, sold to a buyer.
    RESALE_LISTED = "resale.listed", "Tickets listed for resale"
    RESALE_WITHDRAWN = "resale.withdrawn", "Resale withdrawn by the seller"
    RESALE_SOLD = "resale.sold", "Resold tickets paid for by a buyer"
    # The day of departure (flights.denied_boarding): each step, with who decided it.
    VOLUNTEERS_ASKED = "boarding.volunteer_offered", "Volunteers asked to give up their seat"
    VOLUNTEER_ANSWERED = "boarding.volunteer_answered", "A volunteer offer answered"
    BOARDING_DENIED = "boarding.denied", "Boarding denied (or given up by a volunteer)"
    COMPENSATION_PAID = "compensation.paid", "EU 261 compensation paid"
    BOARDING_PRIORITY_SET = "boarding.priority_set", "Art. 11 boarding priority set by staff"
