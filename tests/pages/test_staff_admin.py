"""Issue 6's staff side in Django admin: cancel with refund, block and unblock a seat, and the
inventory overview, driven through the admin's own changelist actions."""

from decimal import Decimal

import pytest
from django.urls import reverse

from bookings.customer_holds import hold_seats
from bookings.models import Booking, BookingStatus
from flights.models import FareInventory, Seat, SeatStatus
from flights.services import check_inventory
from payments.models import Payment, Refund, RefundReason
from payments.outcomes import confirm_payment
from tests.factories import named_hold

pytestmark = pytest.mark.django_db(transaction=True)


def confirmed(customer, flight, seats=("12A", "12B")):
    from django.utils import timezone

    booking = named_hold(customer=customer, flight=flight, seats=seats)
    now = timezone.now()
    payment = Payment.objects.create(
        booking=booking,
        sale_id=booking.sale_id,
        customer=customer,
        idempotency_key=f"adm-{booking.pk}",
        request_fingerprint="x",
        amount=booking.amount,
        currency=booking.currency,
        gateway="sandbox",
        status="PENDING",
        created_at=now,
        updated_at=now,
    )
    confirm_payment(payment_id=payment.pk, reference=f"ch_{booking.pk}")
    booking.refresh_from_db()
    return booking


def run_action(client, model, action, ids, **extra):
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    return client.post(
        url, {"action": action, "_selected_action": [str(i) for i in ids], **extra}, follow=True
    )


def admin_messages(response):
    return [str(m) for m in response.context["messages"]]


def test_staff_cancel_with_refund_from_the_bookings_list(
    client, staff_user, customer, flight, settings
):
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS": False}
    booking = confirmed(customer, flight)
    held = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["20A"]
    )
    client.force_login(staff_user)

    response = run_action(
        client, Booking, "cancel_with_refund", [booking.pk, held.pk], confirm="yes"
    )

    messages = admin_messages(response)
    assert f"Booking {booking.pk} cancelled: refund of €208.00 queued." in messages
    assert f"Booking {held.pk} cancelled: no refund." in messages
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CANCELLED
    refund = Refund.objects.get()
    assert (refund.amount, refund.reason) == (Decimal("208.00"), RefundReason.CANCELLATION)
    assert check_inventory(sale_id=flight.sale_id) == []

    again = run_action(client, Booking, "cancel_with_refund", [booking.pk], confirm="yes")
    assert any("already cancelled" in m for m in admin_messages(again))
    assert Refund.objects.count() == 1


def test_staff_cancel_after_departure_is_refused(client, staff_user, customer, flight):
    booking = confirmed(customer, flight)
    flight.status = "DEPARTED"
    flight.save(update_fields=["status"])
    client.force_login(staff_user)
    response = run_action(client, Booking, "cancel_with_refund", [booking.pk], confirm="yes")
    assert any("already departed" in m for m in admin_messages(response))
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED


def test_block_and_unblock_seat_actions(client, staff_user, flight):
    seat = Seat.objects.get(sale=flight.sale, seat_no="30F")
    capacity = FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").capacity
    client.force_login(staff_user)
    changelist = client.get(reverse("admin:flights_seat_changelist"))
    assert b'value="block"' in changelist.content and b'value="unblock"' in changelist.content

    blocked = run_action(client, Seat, "block", [seat.pk])
    assert "1 seat(s) blocked" in admin_messages(blocked)[0]
    seat.refresh_from_db()
    assert seat.status == SeatStatus.BLOCKED
    assert (
        FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").capacity == capacity - 1
    )

    run_action(client, Seat, "unblock", [seat.pk])
    seat.refresh_from_db()
    assert seat.status == SeatStatus.AVAILABLE
    assert FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").capacity == capacity
    assert check_inventory(sale_id=flight.sale_id) == []


def test_inventory_overview_on_the_flight_list(client, staff_user, customer, flight):
    confirmed(customer, flight)
    client.force_login(staff_user)
    html = client.get(reverse("admin:flights_flight_changelist")).content.decode()
    # economy: 168 capacity + 3 overbook, 2 sold, 0 held, 169 left
    assert "Economy: 2 / 0 / 169 of 168+3" in html


def test_non_staff_cannot_use_the_admin(client, customer, flight):
    booking = confirmed(customer, flight)
    client.force_login(customer)
    response = run_action(client, Booking, "cancel_with_refund", [booking.pk], confirm="yes")
    assert response.redirect_chain and "login" in response.redirect_chain[-1][0]
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED


def test_bulk_cancel_asks_first_listing_each_refund(client, staff_user, customer, flight):
    booking = confirmed(customer, flight)
    held = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["20A"]
    )
    client.force_login(staff_user)

    page = run_action(client, Booking, "cancel_with_refund", [booking.pk, held.pk])

    html = page.content.decode()
    assert "Cancel bookings with refund?" in html
    assert f'data-booking="{booking.pk}"' in html and f'data-booking="{held.pk}"' in html
    assert "€208.00 (100%)" in html  # the confirmed booking's refund by its policy
    assert 'name="confirm" value="yes"' in html
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED  # nothing yet
    assert Booking.objects.get(pk=held.pk).status == BookingStatus.HELD
    assert Refund.objects.count() == 0


def test_no_admin_cancels_without_the_confirmation_page(client, admin_user, customer, flight):
    """The Payment list used to offer its own "cancel and refund" action that cancelled at
    once; cancelling is offered only where the confirmation page is."""
    booking = confirmed(customer, flight)
    client.force_login(admin_user)
    payment = Payment.objects.get(booking=booking)
    page = client.get(reverse("admin:payments_payment_changelist"))
    assert page.status_code == 200
    assert 'name="action"' not in page.content.decode()  # no actions on payments at all
    client.post(
        reverse("admin:payments_payment_changelist"),
        {"action": "cancel_booking_with_refund", "_selected_action": [payment.pk]},
    )
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert Refund.objects.count() == 0


def test_the_admin_seat_map_blocks_and_unblocks_by_click(client, staff_user, customer, flight):
    from tests.factories import UserFactory

    confirmed(customer, flight)  # 12A, 12B sold: shown, not clickable
    client.force_login(staff_user)
    change = reverse("admin:flights_flight_change", args=[flight.pk])
    toggle = reverse("admin:flights_flight_seat_toggle", args=[flight.pk])
    html = client.get(change).content.decode()
    assert f'formaction="{toggle}"' in html and 'value="block:30F"' in html
    assert 'value="block:12A"' not in html and 'aria-label="12A sold"' in html
    assert "12 EXIT" in html

    client.post(toggle, {"seat": "block:30F"})
    assert Seat.objects.get(sale=flight.sale, seat_no="30F").status == SeatStatus.BLOCKED
    assert 'value="unblock:30F"' in client.get(change).content.decode()
    client.post(toggle, {"seat": "unblock:30F"})
    assert Seat.objects.get(sale=flight.sale, seat_no="30F").status == SeatStatus.AVAILABLE
    assert check_inventory(sale_id=flight.sale_id) == []

    refused = client.post(toggle, {"seat": "block:12A"}, follow=True)  # sold: left alone
    assert any("not in a state to block" in m for m in admin_messages(refused))
    assert client.get(toggle).status_code == 405
    assert any("Choose a seat" in m for m in admin_messages(client.post(toggle, {}, follow=True)))

    clerk = UserFactory(is_staff=True)  # staff, but no permission to change seats
    client.force_login(clerk)
    assert client.post(toggle, {"seat": "block:30F"}).status_code == 403
    assert Seat.objects.get(sale=flight.sale, seat_no="30F").status == SeatStatus.AVAILABLE


def test_flight_list_shows_local_departure_next_to_utc(client, staff_user, flight):
    from zoneinfo import ZoneInfo

    client.force_login(staff_user)
    html = client.get(reverse("admin:flights_flight_changelist")).content.decode()
    local = flight.departure_at.astimezone(ZoneInfo(flight.origin.time_zone))
    assert f"{local:%Y-%m-%d %H:%M} {local.tzname()} / {flight.departure_at:%H:%M} UTC" in html


# --- goodwill override: a full refund instead of the policy's, behind its own permission --------


def staff_with(*perms):
    from django.contrib.auth.models import Permission

    from tests.factories import UserFactory

    user = UserFactory(is_staff=True)
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return user


CANCELLER = ("bookings.view_booking", "bookings.change_booking")


def three_days_out(flight):
    """Between the default policy's 14 days and 24 hours: a 50% refund."""
    from datetime import timedelta

    from django.utils import timezone

    from flights.models import Flight

    departure = timezone.now() + timedelta(days=3)
    Flight.objects.filter(pk=flight.pk).update(
        departure_at=departure, arrival_at=departure + timedelta(hours=2)
    )


@pytest.fixture
def no_refund_calls(settings):
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS": False}


def test_goodwill_override_shows_only_for_staff_with_its_permission(customer, flight, client):
    booking = confirmed(customer, flight)
    three_days_out(flight)

    client.force_login(staff_with(*CANCELLER))
    plain = run_action(client, Booking, "cancel_with_refund", [booking.pk]).content.decode()
    assert "€104.00 (50%)" in plain
    assert 'name="goodwill"' not in plain and "Goodwill" not in plain

    client.force_login(staff_with(*CANCELLER, "payments.refund_goodwill"))
    page = run_action(client, Booking, "cancel_with_refund", [booking.pk]).content.decode()
    assert "€104.00 (50%)" in page  # the policy's refund is still listed
    assert 'name="goodwill" value="yes"' in page and "€208.00 (100%)" in page
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED


def test_goodwill_refunds_in_full_and_records_who_approved_it(
    customer, flight, client, no_refund_calls
):
    booking = confirmed(customer, flight)
    three_days_out(flight)
    approver = staff_with(*CANCELLER, "payments.refund_goodwill")
    client.force_login(approver)

    response = run_action(
        client, Booking, "cancel_with_refund", [booking.pk], confirm="yes", goodwill="yes"
    )

    assert f"Booking {booking.pk} cancelled: goodwill refund of €208.00 queued." in (
        admin_messages(response)
    )
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CANCELLED
    refund = Refund.objects.get()
    assert (refund.amount, refund.reason) == (Decimal("208.00"), RefundReason.CANCELLATION)
    assert (refund.goodwill, refund.approved_by, refund.policy_amount) == (
        True,
        approver,
        Decimal("104.00"),
    )
    assert check_inventory(sale_id=flight.sale_id) == []


def test_a_forged_goodwill_field_is_refused_and_nothing_changes(
    customer, flight, client, no_refund_calls
):
    booking = confirmed(customer, flight)
    three_days_out(flight)
    client.force_login(staff_with(*CANCELLER))

    response = run_action(
        client, Booking, "cancel_with_refund", [booking.pk], confirm="yes", goodwill="yes"
    )

    assert any("permission to grant goodwill refunds" in m for m in admin_messages(response))
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert not Refund.objects.exists()


def test_without_goodwill_the_policy_refund_is_recorded_with_its_approver(
    customer, flight, client, no_refund_calls
):
    booking = confirmed(customer, flight)
    three_days_out(flight)
    approver = staff_with(*CANCELLER, "payments.refund_goodwill")
    client.force_login(approver)

    run_action(client, Booking, "cancel_with_refund", [booking.pk], confirm="yes")

    refund = Refund.objects.get()
    assert (refund.amount, refund.goodwill, refund.policy_amount) == (
        Decimal("104.00"),
        False,
        None,
    )
    assert refund.approved_by == approver


def test_the_service_refuses_goodwill_to_staff_without_the_permission(customer, flight):
    from payments.cancellation import cancel_booking
    from payments.errors import GoodwillRefundNotAllowed

    booking = confirmed(customer, flight)
    with pytest.raises(GoodwillRefundNotAllowed):
        cancel_booking(
            customer=staff_with(*CANCELLER), booking_id=booking.pk, by_staff=True, goodwill=True
        )
    with pytest.raises(GoodwillRefundNotAllowed):  # a customer never grants it to themself
        cancel_booking(customer=customer, booking_id=booking.pk, goodwill=True)
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert not Refund.objects.exists()
