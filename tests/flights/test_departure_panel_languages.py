"""Issue 28: the departure panel and its confirmation pages speak the staff member's language
(de, ru): no English label of the panel is left."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission

from flights.denied_boarding import ask_for_volunteers, denial_order, deny_boarding
from languages.services import set_preferred_language
from tests.factories import UserFactory
from tests.flights.oversold import oversold_flight

ENGLISH = ["The day of departure", "Oversold by", "Compensation ledger", "Passengers not flying"]
EXPECTED = {
    "de": ["Der Abflugtag", "Überbucht um", "Ausgleichsbuch", "Beförderung gegen den Willen"],
    "ru": ["День вылета", "Перебронировано на", "Журнал компенсаций", "Отказ в посадке против"],
}


def clerk(language: str):
    user = UserFactory(is_staff=True)
    for codename in ("view_flight", "deny_boarding", "pay_compensation"):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    set_preferred_language(user_id=user.pk, language=language)
    return type(user).objects.get(pk=user.pk)


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["de", "ru"])
def test_the_departure_panel_and_its_confirmations_are_translated(client, language):
    flight, _later, _tickets = oversold_flight()
    staff = clerk(language)
    ask_for_volunteers(flight_id=flight.pk, staff=staff, amount=Decimal("300"))
    first = [c.passenger_id for c in denial_order(flight)[:2]]
    client.force_login(staff)
    url = f"/admin/flights/flight/{flight.pk}/departure/"

    confirm_deny = client.post(url, {"action": "deny"}).content.decode()
    deny_boarding(flight_id=flight.pk, staff=staff, expected_passenger_ids=first)
    panel = client.get(url).content.decode()

    for text in EXPECTED[language]:
        assert text in panel
    for text in ENGLISH:
        assert text not in panel
    assert "Yes, deny boarding" not in confirm_deny and "meals and refreshments" in confirm_deny
    assert {"de": "Mahlzeiten", "ru": "питание"}[language] in confirm_deny
