"""The pages of denied boarding: the volunteer offer on the customer's booking page (accept,
decline, bad input), and the admin's departure panel for one flight, its actions behind their
permissions and confirmation pages."""

import re
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission

from bookings.models import Booking
from flights.denied_boarding import ask_for_volunteers, denial_order
from flights.models import (
    Compensation,
    DeniedBoarding,
    DeniedKind,
    OfferStatus,
    PayoutStatus,
    VolunteerOffer,
)
from flights.rerouting import reroute_pending
from languages.services import set_preferred_language
from tests.factories import UserFactory
from tests.flights.oversold import oversold_flight


def clerk_with(*codenames):
    clerk = UserFactory(is_staff=True)
    for codename in ("view_flight", *codenames):
        clerk.user_permissions.add(Permission.objects.get(codename=codename))
    return type(clerk).objects.get(pk=clerk.pk)


def panel_url(flight):
    return f"/admin/flights/flight/{flight.pk}/departure/"


@pytest.mark.django_db
def test_the_booking_page_shows_the_offer_and_the_customer_accepts_there(client):
    flight, later, tickets = oversold_flight()
    offers = ask_for_volunteers(flight_id=flight.pk, staff=UserFactory(), amount=Decimal("300"))
    offer = next(o for o in offers if o.passenger_id == tickets[0].passenger_id)
    booking = Booking.objects.get(pk=offer.booking_id)
    client.force_login(booking.customer)
    url = f"/bookings/{booking.pk}/volunteer-offers/{offer.pk}/"

    page = client.get(f"/bookings/{booking.pk}/")
    bad = client.post(url, {"answer": "maybe"}, follow=True)
    unsigned = client.post(url, {"answer": "accept", "method": "VOUCHER"}, follow=True)
    done = client.post(
        url, {"answer": "accept", "method": "CASH", "remedy": "REROUTING"}, follow=True
    )

    assert f'id="volunteer-offer-{offer.pk}"'.encode() in page.content
    assert "accept or decline" in bad.content.decode()
    assert "signed agreement" in unsigned.content.decode()
    assert VolunteerOffer.objects.get(pk=offer.pk).status == OfferStatus.ACCEPTED
    reroute_pending()  # the rerouting's own step, after the acceptance committed
    denied = DeniedBoarding.objects.get(passenger_id=offer.passenger_id)
    assert denied.kind == DeniedKind.VOLUNTEER and denied.rebooked_onto.sale_id == later.sale_id
    assert f'id="denied-{denied.pk}"'.encode() in done.content
    assert Compensation.objects.get().amount == Decimal("300.00")


@pytest.mark.django_db
def test_another_customer_cannot_answer_an_offer(client):
    flight, _later, _tickets = oversold_flight()
    (offer, *_rest) = ask_for_volunteers(
        flight_id=flight.pk, staff=UserFactory(), amount=Decimal("300")
    )
    client.force_login(UserFactory())

    response = client.post(
        f"/bookings/{offer.booking_id}/volunteer-offers/{offer.pk}/",
        {"answer": "accept"},
        follow=True,
    )

    assert "No such offer" in response.content.decode()
    assert VolunteerOffer.objects.get(pk=offer.pk).status == OfferStatus.OFFERED


@pytest.mark.django_db
def test_the_panel_shows_every_count_and_denying_needs_its_permission_and_a_confirmation(client):
    flight, _later, _tickets = oversold_flight()
    viewer = clerk_with()
    client.force_login(viewer)

    shown = client.get(panel_url(flight))
    refused = client.post(panel_url(flight), {"action": "deny"})

    assert shown.status_code == 200
    html = shown.content.decode()
    assert 'id="count-checked-in">8<' in html and 'id="count-oversold">2<' in html
    assert 'id="count-seats">6<' in html and 'id="deny-form"' not in html
    assert refused.status_code == 403

    clerk = clerk_with("deny_boarding")
    client.force_login(clerk)
    confirm = client.post(panel_url(flight), {"action": "deny"})
    expected = [c.passenger_id for c in denial_order(flight)[:2]]

    page = confirm.content.decode()
    assert 'id="denial-priority"' in page and "Art. 11" in page
    assert all(f'name="passenger" value="{pk}"' in page for pk in expected)
    assert not DeniedBoarding.objects.exists(), "nothing changes before the confirmation"

    done = client.post(
        panel_url(flight),
        {
            "action": "deny",
            "confirm": "yes",
            "passenger": expected,
            f"remedy_{expected[1]}": "REFUND",
            "care": ["meals and refreshments"],
        },
        follow=True,
    )

    assert DeniedBoarding.objects.filter(kind=DeniedKind.DENIED, decided_by=clerk).count() == 2
    assert 'id="count-denied">2<' in done.content.decode()
    assert 'id="count-oversold">0<' in done.content.decode()


@pytest.mark.django_db
def test_asking_for_volunteers_and_paying_compensation_from_the_panel(client):
    flight, _later, _tickets = oversold_flight()
    clerk = clerk_with("deny_boarding", "pay_compensation")
    client.force_login(clerk)

    bad = client.post(panel_url(flight), {"action": "ask", "amount": "lots"}, follow=True)
    asked = client.post(panel_url(flight), {"action": "ask", "amount": "300"})
    assert not VolunteerOffer.objects.exists()
    client.post(panel_url(flight), {"action": "ask", "amount": "300", "confirm": "yes"})
    expected = [c.passenger_id for c in denial_order(flight)[:2]]
    client.post(panel_url(flight), {"action": "deny", "confirm": "yes", "passenger": expected})
    entry = Compensation.objects.order_by("id").first()
    confirm = client.post(
        panel_url(flight), {"action": "pay", "compensation": entry.pk, "reference": "SEPA-7"}
    )
    client.post(
        panel_url(flight),
        {"action": "pay", "compensation": entry.pk, "reference": "SEPA-7", "confirm": "yes"},
    )

    assert "between 0 and 10,000" in bad.content.decode()
    assert "Yes, ask for volunteers" in asked.content.decode()
    assert VolunteerOffer.objects.count() == 8
    assert "SEPA-7" in confirm.content.decode()
    entry.refresh_from_db()
    assert entry.status == PayoutStatus.PAID and entry.paid_by == clerk


@pytest.mark.django_db
def test_the_api_answers_an_offer_and_refuses_a_voucher_without_agreement():
    from rest_framework.test import APIClient

    flight, _later, tickets = oversold_flight()
    offers = ask_for_volunteers(flight_id=flight.pk, staff=UserFactory(), amount=Decimal("300"))
    offer = next(o for o in offers if o.passenger_id == tickets[0].passenger_id)
    client = APIClient()
    client.force_authenticate(Booking.objects.get(pk=offer.booking_id).customer)
    url = f"/api/bookings/{offer.booking_id}/volunteer-offers/{offer.pk}"

    voucher = client.post(url, {"accept": True, "payoutMethod": "VOUCHER"}, format="json")
    bad = client.post(url, {"accept": "perhaps"}, format="json")
    declined = client.post(url, {"accept": False}, format="json")
    again = client.post(url, {"accept": True}, format="json")

    assert voucher.status_code == 400 and voucher["Content-Type"] == "application/problem+json"
    assert bad.status_code == 400
    assert declined.status_code == 200
    assert declined.json() == {"offerId": offer.pk, "status": "DECLINED"}
    assert again.status_code == 400 and not DeniedBoarding.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["de", "ru", "en"])
def test_the_volunteer_offer_confirms_with_its_cents_in_every_language(client, language):
    """The confirm step carries the offer back as a machine number: written the German way
    ("250,50") it was refused as "must be between 0 and 10,000 EUR" and nobody was asked."""
    flight, _later, _tickets = oversold_flight()
    clerk = clerk_with("deny_boarding")
    set_preferred_language(user_id=clerk.pk, language=language)
    client.force_login(clerk)
    asked = client.post(panel_url(flight), {"action": "ask", "amount": "250.50"}).content.decode()
    sent = re.search(r'name="amount" value="([^"]+)"', asked).group(1)
    assert sent == "250.50"
    client.post(panel_url(flight), {"action": "ask", "amount": sent, "confirm": "yes"})
    assert VolunteerOffer.objects.exists()
    assert {o.amount for o in VolunteerOffer.objects.all()} == {Decimal("250.50")}
