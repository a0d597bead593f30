"""Issue 31: a class code staff can save is one the API accepts (kernel.web.fields): the admin
refuses "VIP 1" with a clear message and saves nothing; "VIP-1" (the pattern) is saved."""

import pytest
from django.urls import reverse

from bookings.models import BookingClass
from kernel.web.fields import CLASS_CODE_MESSAGE
from tests.factories import FlightFactory, economy_only_layout

pytestmark = pytest.mark.django_db


def add_class(client, flight, code):
    fields = {"flight": flight.pk, "fare_class": "ECONOMY", "code": code, "name": "Launch"}
    fields |= {"rank": 1, "auth_limit": 3, "price": "19.00"}
    return client.post(reverse("admin:bookings_bookingclass_add"), fields)


@pytest.mark.parametrize("code", ["VIP 1", " LAUNCH", "VIP_1"])
def test_the_admin_refuses_a_booking_class_code_the_api_would_refuse(client, staff_user, code):
    flight = FlightFactory(layout=economy_only_layout(rows=2, overbook_limit=0))
    client.force_login(staff_user)

    refused = add_class(client, flight, code)

    assert refused.status_code == 200
    assert str(CLASS_CODE_MESSAGE) in refused.text
    assert not BookingClass.objects.exists()


def test_control_a_code_of_the_pattern_is_saved(client, staff_user):
    flight = FlightFactory(layout=economy_only_layout(rows=2, overbook_limit=0))
    client.force_login(staff_user)

    assert add_class(client, flight, "VIP-1").status_code == 302
    assert BookingClass.objects.get().code == "VIP-1"
