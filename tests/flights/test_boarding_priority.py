"""EU 261 Art. 11 flags set on screens: staff on the departure panel (behind
`flights.deny_boarding`, with an audit event), the customer on the online check-in page; a
flagged passenger keeps their place when boarding is denied, with a control without the flag."""

import pytest

from bookings.models import Passenger, Ticket, TicketStatus
from flights.denied_boarding import denial_order
from flights.models import DeniedBoarding, DeniedKind, OnlineCheckIn
from kernel.models import OutboxEvent
from kernel.outbox_types import OutboxEventType
from tests.flights.departing import booking_of, seated
from tests.flights.oversold import oversold_flight
from tests.flights.test_departure_panel import clerk_with, panel_url
from tests.flights.test_online_checkin_page import page, soon


def flags_of(passenger_id):
    record = OnlineCheckIn.objects.get(passenger_id=passenger_id)
    return record.reduced_mobility, record.unaccompanied_minor


@pytest.mark.django_db
@pytest.mark.parametrize("flagged", [True, False], ids=["flag-set", "control-no-flag"])
def test_a_passenger_flagged_on_the_panel_keeps_their_place_when_boarding_is_denied(
    client, flagged
):
    flight, _later, tickets = oversold_flight()
    last = tickets[-1]  # checked in last: the first to be denied without the flag
    clerk = clerk_with("deny_boarding")
    client.force_login(clerk)
    shown = client.get(panel_url(flight))
    assert f'id="priority-{last.passenger_id}"' in shown.content.decode()

    if flagged:
        saved = client.post(
            panel_url(flight),
            {"action": "priority", "passenger": last.passenger_id, "reduced_mobility": "on"},
            follow=True,
        )
        assert "Boarding priority saved." in saved.content.decode()
        assert flags_of(last.passenger_id) == (True, False)
    expected = [c.passenger_id for c in denial_order(flight)[:2]]
    client.post(panel_url(flight), {"action": "deny", "confirm": "yes", "passenger": expected})

    denied = set(
        DeniedBoarding.objects.filter(kind=DeniedKind.DENIED).values_list("passenger_id", flat=True)
    )
    assert len(denied) == 2 and denied == set(expected)
    ticket = Ticket.objects.get(pk=last.pk)
    if flagged:
        assert last.passenger_id not in denied
        assert ticket.status == TicketStatus.VALID
        # a denied passenger's seat went to them: they fly, seated
        assert Passenger.objects.get(pk=last.passenger_id).seat_id is not None
        event = OutboxEvent.objects.get(event_type=OutboxEventType.BOARDING_PRIORITY_SET)
        assert event.payload["passengerId"] == last.passenger_id
        assert event.payload["reducedMobility"] is True
        assert event.payload["decidedBy"] == clerk.pk
    else:
        assert last.passenger_id in denied
        assert ticket.status == TicketStatus.REVOKED
        assert not OutboxEvent.objects.filter(
            event_type=OutboxEventType.BOARDING_PRIORITY_SET
        ).exists()


@pytest.mark.django_db
def test_staff_without_the_deny_permission_get_403_and_bad_input_changes_nothing(client):
    flight, _later, tickets = oversold_flight()
    passenger_id = tickets[0].passenger_id
    client.force_login(clerk_with())

    refused = client.post(
        panel_url(flight),
        {"action": "priority", "passenger": passenger_id, "unaccompanied_minor": "on"},
    )
    assert refused.status_code == 403
    assert flags_of(passenger_id) == (False, False)

    client.force_login(clerk_with("deny_boarding"))
    unknown = client.post(
        panel_url(flight), {"action": "priority", "passenger": "999999"}, follow=True
    )
    assert unknown.status_code == 200
    assert "has not checked in on this flight" in unknown.content.decode()
    client.post(
        panel_url(flight),
        {"action": "priority", "passenger": passenger_id, "unaccompanied_minor": "on"},
    )
    assert flags_of(passenger_id) == (False, True)
    assert OutboxEvent.objects.filter(event_type=OutboxEventType.BOARDING_PRIORITY_SET).count() == 1


@pytest.mark.django_db
def test_the_online_check_in_page_declares_reduced_mobility_per_passenger(client):
    flight = soon()
    a, b = seated(flight, "1A", "1B")
    booking = booking_of(a)
    client.force_login(booking.customer)

    shown = client.get(page(booking))
    assert f'name="assistance_{a.passenger_id}"'.encode() in shown.content
    assert "Needs assistance (reduced mobility)" in shown.content.decode()
    client.post(page(booking), {f"assistance_{b.passenger_id}": "on"}, follow=True)
    assert flags_of(a.passenger_id) == (False, False)
    assert flags_of(b.passenger_id) == (True, False)
    again = client.get(page(booking))
    assert f'id="assistance-{b.passenger_id}" checked'.encode() in again.content

    # changing the declaration before the cut-off: the customer's own, as last sent
    client.post(page(booking), {f"assistance_{a.passenger_id}": "on"}, follow=True)
    assert flags_of(a.passenger_id) == (True, False)
    assert flags_of(b.passenger_id) == (False, False)
