"""Issue 31, item 13: admin pages that said too little, or too much in the wrong place."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from bookings.customer_holds import hold_seats
from events.models import VenueSeat
from payments.models import Refund, RefundReason, RefundStatus
from tests.events.factories import EventFactory, VenueFactory
from tests.pages.test_staff_admin import confirmed

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff(client, staff_user):
    client.force_login(staff_user)
    return client


def test_a_booking_page_says_route_date_payments_refunds_and_offers_cancelling(
    staff, customer, flight
):
    booking = confirmed(customer, flight)
    payment = booking.payments.get()
    Refund.objects.create(
        payment=payment,
        sale_id=payment.sale_id,
        amount="20.00",
        currency=payment.currency,
        status=RefundStatus.PENDING,
        reason=RefundReason.CANCELLATION,
        created_at=timezone.now(),
    )
    page = staff.get(reverse("admin:bookings_booking_change", args=[booking.pk]))
    html = page.content.decode()
    assert f"flight {flight.code} · SGN → HAN · " in html  # what, where and when
    assert "Flight sale" not in html
    assert f"Payment {payment.pk}" in html and "€208.00" in html
    assert "Refund " in html and "€20.00" in html
    assert 'value="cancel_with_refund"' in html and "Cancel with refund" in html


def test_the_cancel_confirmation_names_the_event_of_an_event_booking(staff, customer):
    event = EventFactory()
    booking = hold_seats(
        customer=customer,
        sale_id=event.sale_id,
        fare_class="A",
        seat_numbers=["1-1-1"],
        passenger_names=["Ada Lovelace"],
    )
    confirm = staff.post(
        reverse("admin:bookings_booking_changelist"),
        {"action": "cancel_with_refund", "_selected_action": [booking.pk]},
    ).content.decode()
    row = confirm.split(f'data-booking="{booking.pk}"')[1].split("</tr>")[0]
    assert event.name in row and event.venue.name in row
    assert '<th scope="col">Flight</th>' not in confirm


def test_exit_rows_are_edited_as_row_numbers(staff, flight):
    page = staff.get(reverse("admin:flights_flight_change", args=[flight.pk])).content.decode()
    assert 'name="exit_rows" value="12, 13"' in page
    assert "[12, 13]" not in page


def test_exit_rows_that_are_not_numbers_are_refused_plainly():
    from flights.admin_forms import ExitRowsField

    field = ExitRowsField(required=False)
    assert field.clean("14; 12, 12") == [12, 14]
    with pytest.raises(Exception, match="is not a row number"):
        field.clean("[12, 13]")


def test_the_grid_builder_opens_with_the_current_plan(staff):
    venue = VenueFactory()
    url = reverse("admin:events_venue_plan_grid", args=[venue.pk])
    page = staff.get(url)
    text = page.context["form"]["description"].value()
    assert text.startswith("stage: ") or text.startswith("Section ")
    assert "#" not in text  # a grid plan is written back exactly, with no warning

    def seats():
        return sorted(
            VenueSeat.objects.filter(section__venue=venue).values_list(
                "section__name", "row", "number", "x", "y", "accessible", "restricted_view"
            )
        )

    before = seats()
    assert len(before) == 34
    staff.post(url, {"description": text}, follow=True)
    after = seats()
    assert after == before  # saving the pre-filled text unchanged changes nothing
    assert "<li><code>Standing Floor: capacity 800</code></li>" in page.content.decode()


def test_the_waiting_room_form_picks_its_sale_by_search(staff):
    event = EventFactory()
    page = staff.get(reverse("admin:waitroom_waitingroom_add")).content.decode()
    assert "admin-autocomplete" in page and "vForeignKeyRawIdAdminField" not in page
    found = staff.get(
        reverse("admin:autocomplete"),
        {
            "term": event.name,
            "app_label": "waitroom",
            "model_name": "waitingroom",
            "field_name": "sale",
        },
    ).json()
    assert [r["id"] for r in found["results"]] == [str(event.sale_id)]
    assert found["results"][0]["text"].startswith(f"{event.name} · {event.venue.name}")
