"""A departure end to end through the services the pages call (issue 28, "Done when"; the
browser version is still open): 8 tickets on 6 seats, all checked in online choosing seats;
one volunteer takes cash and a later flight; one passenger is denied and rebooked with the
compensation the distance gives; at gate close a seated passenger who never boarded is a
no-show and the seat goes to a standby passenger; e-mails go in each customer's language; the
panel shows every count.  On a non-EU flight nobody is owed EU 261 compensation."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from bookings.models import Notification, Passenger
from bookings.notifications import send_notification
from flights.denied_boarding import answer_offer, ask_for_volunteers, denial_order, deny_boarding
from flights.departure import close_gate
from flights.departure_panel import departure_panel
from flights.models import Airport, Compensation, Flight, NoShow
from flights.online_checkin import check_in_online
from flights.rerouting import reroute_pending
from flights.services import check_inventory
from kernel.outbox import relay_outbox
from languages.services import set_preferred_language
from tests.factories import UserFactory
from tests.flights.departing import board, booking_of, seated, seatless, small_flight
from tests.flights.oversold import eu_airports


@pytest.mark.django_db
@pytest.mark.parametrize("in_eu", [True, False], ids=["eu-flight", "non-eu-flight"])
def test_a_departure_with_8_tickets_on_6_seats(in_eu, mailoutbox):
    fra, ber = eu_airports()
    if not in_eu:
        Airport.objects.filter(pk__in=[fra.pk, ber.pk]).update(country="VN")
    now = timezone.now()
    flight = small_flight(
        rows=1,
        overbook_limit=3,
        origin=fra,
        destination=ber,
        departure_at=now + timedelta(minutes=30),
    )
    later = small_flight(
        rows=2, origin=fra, destination=ber, departure_at=now + timedelta(hours=3, minutes=30)
    )
    staff = UserFactory(is_staff=True)
    tickets = [seated(flight, seat)[0] for seat in ("1A", "1B", "1C", "1D")] + [
        seatless(flight, 1)[0] for _ in range(4)
    ]
    walk_up = seatless(flight, 1)[0]  # never checks in online: reports at the gate
    languages = ["de", "ru", "en", "de", "ru", "en", "de", "ru"]
    for ticket, language in zip(tickets, languages, strict=True):
        set_preferred_language(user_id=booking_of(ticket).customer_id, language=language)

    # All 8 check in online, two hours before: the seated choose seats, the others get one.
    opened = flight.departure_at - timedelta(hours=2)
    choices = {0: "1F", 1: "1E"}
    for i, ticket in enumerate(tickets):
        booking = booking_of(ticket)
        check_in_online(
            customer=booking.customer,
            booking_id=booking.pk,
            seat_choices={ticket.passenger_id: choices[i]} if i in choices else {},
            now=opened + timedelta(minutes=i),
        )
    seats = {t.pk: Passenger.objects.get(pk=t.passenger_id).seat for t in tickets}
    assert sum(seat is not None for seat in seats.values()) == 6
    flight = Flight.objects.get(pk=flight.pk)
    assert departure_panel(flight_id=flight.pk).oversold_by == 2

    # Volunteers: the first asked accepts cash and the next flight.
    offers = ask_for_volunteers(flight_id=flight.pk, staff=staff, amount=Decimal("250.00"))
    volunteer = offers[0]
    answer_offer(
        customer=booking_of(
            next(t for t in tickets if t.passenger_id == volunteer.passenger_id)
        ).customer,
        offer_id=volunteer.pk,
        accept=True,
    )
    # Not enough: one is denied, in the priority shown to staff.
    (to_deny,) = [c.passenger_id for c in denial_order(flight)[:1]]
    (denied,) = deny_boarding(
        flight_id=flight.pk, staff=staff, expected_passenger_ids=[to_deny], care=["meals"]
    )
    # Each rerouting is booked on the later flight's sale after its denial committed.
    assert denied.rebooked_onto is None and reroute_pending() == 2
    denied.refresh_from_db()
    assert denied.rebooked_onto.sale_id == later.sale_id
    if in_eu:  # FRA-BER, about 480 km: Art. 7(1)(a); rerouted 3 h later, so not halved
        assert denied.compensation.amount == Decimal("250.00")
        assert denied.compensation.method == "CASH"
    else:
        assert not Compensation.objects.filter(denied_boarding=denied).exists()

    # Boarding: every seated passenger still flying boards but one; the walk-up reports.
    flying = [t for t in tickets if t.passenger_id not in (volunteer.passenger_id, to_deny)]
    seated_now = [t for t in flying if Passenger.objects.get(pk=t.passenger_id).seat]
    assert len(seated_now) == 6
    for ticket in seated_now[:-1]:
        board(ticket, staff=staff, flight=flight)
    board(walk_up, staff=staff, flight=flight)  # seatless: on standby
    no_show_seat_no = Passenger.objects.get(pk=seated_now[-1].passenger_id).seat.seat_no
    result = close_gate(flight_id=flight.pk, now=flight.departure_at - timedelta(minutes=20))

    assert (result.no_shows, result.standby_seated) == (1, 1)
    panel = departure_panel(flight_id=flight.pk)
    expected_counts = {
        "seats": 6,
        "booked": 9,
        "checked_in": 8,
        "no_shows": 1,
        "volunteers": 1,
        "denied": 1,
    }
    assert {k: panel.counts[k] for k in expected_counts} == expected_counts
    assert panel.counts["boarded"] == 6  # five seated and the walk-up, scanned
    assert check_inventory(sale_id=flight.sale_id) == []
    assert check_inventory(sale_id=later.sale_id) == []
    # The no-show's seat went to the walk-up waiting on standby.
    no_show = NoShow.objects.get(flight=flight)
    assert (no_show.ticket_id, no_show.seat_given_to_id) == (seated_now[-1].pk, walk_up.pk)
    assert Passenger.objects.get(pk=walk_up.passenger_id).seat.seat_no == no_show_seat_no

    # E-mails, each in its customer's language.
    relay_outbox(now=timezone.now() + timedelta(hours=1))
    for pk in Notification.objects.filter(status="PENDING").values_list("pk", flat=True):
        send_notification(notification_id=pk)
    words = {"de": "fliegen nicht", "ru": "не летите", "en": "not flying"}
    subjects = {
        m.to[0]: m.subject for m in mailoutbox if any(w in m.subject for w in words.values())
    }
    volunteer_language = languages[[t.passenger_id for t in tickets].index(volunteer.passenger_id)]
    denied_language = languages[[t.passenger_id for t in tickets].index(to_deny)]
    volunteer_email = booking_of(
        next(t for t in tickets if t.passenger_id == volunteer.passenger_id)
    ).customer.email
    denied_email = booking_of(next(t for t in tickets if t.passenger_id == to_deny)).customer.email
    assert words[volunteer_language] in subjects[volunteer_email]
    assert words[denied_language] in subjects[denied_email]
