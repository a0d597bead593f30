"""Denied boarding (EU 261): the oversold count at the cut-off, volunteers asked and answering,
denial in the stated priority, compensation through its own ledger, rerouting through the
engine or a refund, every step in the outbox with who decided; and two staff denying at once
(with a control)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from bookings.models import Booking, BookingStatus, Notification, Ticket, TicketStatus
from flights import compensation
from flights.denied_boarding import (
    DenialChanged,
    answer_offer,
    ask_for_volunteers,
    denial_order,
    deny_boarding,
    oversold_by,
)
from flights.eu261 import Remedy
from flights.models import (
    Compensation,
    DeniedBoarding,
    DeniedKind,
    OfferStatus,
    OnlineCheckIn,
    PayoutMethod,
    PayoutStatus,
    VolunteerOffer,
)
from flights.rerouting import reroute_pending
from flights.services import check_inventory
from kernel.errors import InvalidRequest
from kernel.models import OutboxEvent
from kernel.outbox import relay_outbox
from languages.services import set_preferred_language
from tests.concurrency import run_concurrently
from tests.factories import UserFactory
from tests.flights.oversold import oversold_flight


def staff_member():
    return UserFactory(is_staff=True)


def customer_of(ticket):
    return Booking.objects.get(pk=ticket.booking_id).customer


@pytest.mark.django_db
def test_the_flight_is_oversold_by_checked_in_minus_seats_and_the_priority_spares_art_11():
    flight, _later, tickets = oversold_flight()
    last, before_last = tickets[-1], tickets[-2]
    OnlineCheckIn.objects.filter(passenger_id=last.passenger_id).update(reduced_mobility=True)

    order = [c.passenger_id for c in denial_order(flight)]

    assert oversold_by(flight) == 2
    assert last.passenger_id not in order  # Art. 11: never denied
    assert order[0] == before_last.passenger_id  # then the last to check in
    assert len(order) == 7


@pytest.mark.django_db
def test_nothing_is_decided_before_the_check_in_cut_off():
    flight, _later, _tickets = oversold_flight(departs_in=timedelta(hours=2))

    with pytest.raises(InvalidRequest):
        ask_for_volunteers(flight_id=flight.pk, staff=staff_member(), amount=Decimal("300"))
    assert not VolunteerOffer.objects.exists()


@pytest.mark.django_db
def test_a_volunteer_accepts_cash_and_a_later_flight_and_the_offers_end_when_enough(mailoutbox):
    flight, later, tickets = oversold_flight()
    staff = staff_member()
    offers = ask_for_volunteers(flight_id=flight.pk, staff=staff, amount=Decimal("300.00"))
    by_passenger = {o.passenger_id: o for o in offers}
    first, second = (by_passenger[t.passenger_id] for t in tickets[:2])

    answer_offer(customer=customer_of(tickets[0]), offer_id=first.pk, accept=True)
    answer_offer(customer=customer_of(tickets[1]), offer_id=second.pk, accept=True)

    assert reroute_pending() == 2  # each rerouting's own step, after its denial committed
    volunteers = DeniedBoarding.objects.filter(kind=DeniedKind.VOLUNTEER)
    assert volunteers.count() == 2 and oversold_by(flight) == 0
    assert set(VolunteerOffer.objects.values_list("status", flat=True)) == {
        OfferStatus.ACCEPTED,
        OfferStatus.WITHDRAWN,
    }
    denied = volunteers.get(passenger_id=tickets[0].passenger_id)
    assert Ticket.objects.get(pk=tickets[0].pk).status == TicketStatus.REVOKED
    new = denied.rebooked_onto
    assert new.status == BookingStatus.CONFIRMED and new.sale_id == later.sale_id
    entry = denied.compensation
    # The volunteer's EUR 300 beats the regulation's 125 (250, halved: rerouted within 2 h? no:
    # 3 h later, so EUR 250 in full) -- the accepted amount is paid, in cash.
    assert (entry.amount, entry.method, entry.status) == (
        Decimal("300.00"),
        PayoutMethod.CASH,
        PayoutStatus.PENDING,
    )
    assert check_inventory(sale_id=later.sale_id) == []
    events = OutboxEvent.objects.filter(event_type="boarding.denied")
    assert events.count() == 2
    # A volunteer decides for themselves; staff asked.
    assert {e.payload["decidedBy"] for e in events} == {customer_of(t).pk for t in tickets[:2]}
    asked = OutboxEvent.objects.filter(event_type="boarding.volunteer_offered")
    assert asked.count() == len(offers) == 8
    assert {e.payload["decidedBy"] for e in asked} == {staff.pk}


@pytest.mark.django_db
def test_a_voucher_needs_the_signed_agreement_and_a_refusal_changes_nothing():
    flight, _later, _tickets = oversold_flight()
    (offer, *_rest) = ask_for_volunteers(
        flight_id=flight.pk, staff=staff_member(), amount=Decimal("300.00")
    )
    customer = Booking.objects.get(pk=offer.booking_id).customer

    with pytest.raises(InvalidRequest):
        answer_offer(customer=customer, offer_id=offer.pk, accept=True, method=PayoutMethod.VOUCHER)

    assert VolunteerOffer.objects.get(pk=offer.pk).status == OfferStatus.OFFERED
    assert not DeniedBoarding.objects.exists() and not Compensation.objects.exists()
    assert Ticket.objects.filter(status=TicketStatus.REVOKED).count() == 0
    answer_offer(
        customer=customer,
        offer_id=offer.pk,
        accept=True,
        method=PayoutMethod.VOUCHER,
        voucher_agreed=True,
    )
    entry = Compensation.objects.get()
    assert entry.method == PayoutMethod.VOUCHER and entry.voucher_agreement_signed_at


@pytest.mark.django_db
def test_staff_deny_in_priority_and_the_rerouted_within_2_h_get_half_the_refunded_the_full():
    flight, later, _tickets = oversold_flight(later_in=timedelta(hours=2))
    staff = staff_member()
    expected = [c.passenger_id for c in denial_order(flight)[:2]]

    with pytest.raises(DenialChanged):  # what staff saw must be what is decided
        deny_boarding(flight_id=flight.pk, staff=staff, expected_passenger_ids=expected[:1])
    deny_boarding(
        flight_id=flight.pk,
        staff=staff,
        expected_passenger_ids=expected,
        remedies={expected[1]: Remedy.REFUND},
        care=["meal voucher", "phone calls"],
    )

    assert reroute_pending() == 1  # the rerouting's own step; the refund has none
    by_passenger = {d.passenger_id: d for d in DeniedBoarding.objects.all()}
    rerouted, refunded = by_passenger[expected[0]], by_passenger[expected[1]]
    assert rerouted.rebooked_onto.sale_id == later.sale_id
    assert rerouted.compensation.amount == Decimal("125.00") and rerouted.compensation.reduced
    assert refunded.rebooked_onto is None and refunded.compensation.amount == Decimal("250.00")
    assert rerouted.decided_by == staff and rerouted.care_offered == ["meal voucher", "phone calls"]
    assert oversold_by(flight) == 0
    assert OutboxEvent.objects.filter(event_type="boarding.denied").count() == 2


@pytest.mark.django_db
def test_emails_go_in_the_customers_language_and_compensation_is_paid_once(mailoutbox):
    flight, _later, _tickets = oversold_flight()
    staff = staff_member()
    expected = [c.passenger_id for c in denial_order(flight)[:2]]
    first = OnlineCheckIn.objects.get(passenger_id=expected[0]).passenger.booking.customer
    set_preferred_language(user_id=first.pk, language="de")
    denied = deny_boarding(flight_id=flight.pk, staff=staff, expected_passenger_ids=expected)
    reroute_pending()  # the reroutings' e-mails are queued once their bookings exist

    relay_outbox(now=timezone.now() + timedelta(hours=1))
    from bookings.notifications import send_notification

    for pk in Notification.objects.values_list("pk", flat=True):
        send_notification(notification_id=pk)
    german = [m for m in mailoutbox if m.to == [first.email] and "fliegen nicht" in m.subject]
    entry = next(d for d in denied if d.passenger_id == expected[0]).compensation

    assert german, [m.subject for m in mailoutbox]
    assert compensation.pay_out(compensation_id=entry.pk, staff=staff, reference="SEPA-1")
    assert not compensation.pay_out(compensation_id=entry.pk, staff=staff, reference="SEPA-2")
    entry.refresh_from_db()
    assert entry.status == PayoutStatus.PAID and entry.payout_reference == "SEPA-1"
    assert OutboxEvent.objects.filter(event_type="compensation.paid").count() == 1


@pytest.mark.django_db
def test_outside_eu_261_nobody_is_owed_compensation():
    flight, _later, _tickets = oversold_flight()
    from flights.models import Airport

    Airport.objects.filter(code__in=["FRA", "BER"]).update(country="VN")
    expected = [c.passenger_id for c in denial_order(flight)[:2]]

    denied = deny_boarding(
        flight_id=flight.pk, staff=staff_member(), expected_passenger_ids=expected
    )

    assert len(denied) == 2 and not Compensation.objects.exists()


# --- two staff denying boarding at once -------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_two_staff_denying_at_once_deny_exactly_the_oversold_count():
    flight, later, _tickets = oversold_flight()
    expected = [c.passenger_id for c in denial_order(flight)[:2]]
    staff = [staff_member(), staff_member()]

    outcomes = run_concurrently(
        [
            lambda s=s: len(
                deny_boarding(flight_id=flight.pk, staff=s, expected_passenger_ids=expected)
            )
            for s in staff
        ]
    )

    assert outcomes.results == [2]
    assert outcomes.error_kinds == {"DenialChanged": 1}
    assert DeniedBoarding.objects.count() == 2 and Compensation.objects.count() == 2
    # Each rerouting once, also when two workers run the step at once (one that finds the
    # other's booking under way leaves it to the other, or replays it).
    outcomes = run_concurrently([reroute_pending, reroute_pending])
    assert not outcomes.errors, outcomes.errors
    reroute_pending()
    assert DeniedBoarding.objects.filter(rebooked_onto__isnull=True).count() == 0
    assert Booking.objects.filter(sale_id=later.sale_id).count() == 2  # one rerouting each
    assert check_inventory(sale_id=later.sale_id) == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_control_denying_without_the_flight_lock_and_the_ticket_condition_rebooks_twice():
    import time

    from django.db import transaction

    from flights.rebooking import book_onto

    flight, later, _tickets = oversold_flight()
    staff = [staff_member(), staff_member()]

    def naive(_staff):
        def deny():
            chosen = [c.passenger for c in denial_order(flight)[: oversold_by(flight)]]
            time.sleep(0.3)
            with transaction.atomic():  # no flight lock, no VALID -> REVOKED condition
                for p in chosen:
                    Ticket.objects.filter(passenger=p).update(
                        status=TicketStatus.REVOKED, revoked_at=timezone.now()
                    )
                    book_onto(
                        candidate=later, passenger=p, customer=p.booking.customer,
                        now=timezone.now(),
                    )  # fmt: skip
            return len(chosen)

        return deny

    outcomes = run_concurrently([naive(s) for s in staff])
    assert not outcomes.errors, outcomes.errors

    assert outcomes.results == [2, 2], "both staff denied the same two passengers"
    assert Booking.objects.filter(sale_id=later.sale_id).count() == 4, "rebooked twice each"


@pytest.mark.django_db
def test_a_denied_passengers_seat_goes_to_the_first_seatless_one_checked_in():
    flight, _later, tickets = oversold_flight()
    seated_one, seatless_first = tickets[0], tickets[6]
    # The seated passenger checked in last: first to be denied.
    OnlineCheckIn.objects.filter(passenger_id=seated_one.passenger_id).update(
        checked_in_at=timezone.now()
    )
    from bookings.models import Passenger

    expected = [c.passenger_id for c in denial_order(flight)[:2]]
    assert expected[0] == seated_one.passenger_id

    deny_boarding(flight_id=flight.pk, staff=staff_member(), expected_passenger_ids=expected)

    assert Passenger.objects.get(pk=seated_one.passenger_id).seat is None
    assert Passenger.objects.get(pk=seatless_first.passenger_id).seat.seat_no == "1A"
    assert Ticket.objects.get(pk=seatless_first.pk).seat_no == "1A"
    assert check_inventory(sale_id=flight.sale_id) == []
