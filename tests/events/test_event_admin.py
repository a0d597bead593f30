"""Staff build a venue and an event in the admin: the plan builders, the event with its
price categories, the seat-category rules, putting it on sale and cancelling it."""

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from events.models import CategoryAssignment, Event, EventStatus, Section, Venue, VenueSeat
from tests.events.factories import EventFactory, VenueFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client, staff_user):
    client.force_login(staff_user)
    return client


def messages_of(response):
    return [str(m) for m in response.context["messages"]]


def test_venue_is_added_with_a_real_time_zone(staff):
    url = reverse("admin:events_venue_add")
    fields = {"name": "Arena", "city": "Köln", "address": "", "stage_side": "TOP"}
    fields |= {"sections-TOTAL_FORMS": 0, "sections-INITIAL_FORMS": 0}
    refused = staff.post(url, {**fields, "time_zone": "Europe/Cologne"})
    assert refused.status_code == 200 and "not an IANA time zone" in refused.content.decode()
    staff.post(url, {**fields, "time_zone": "Europe/Berlin"})
    assert Venue.objects.get().time_zone == "Europe/Berlin"


def test_plan_from_grid_in_admin_all_or_nothing(staff):
    venue = VenueFactory(plan="")
    url = reverse("admin:events_venue_plan_grid", args=[venue.pk])
    assert (
        "Build from a grid description"
        in staff.get(reverse("admin:events_venue_change", args=[venue.pk])).content.decode()
    )
    bad = staff.post(url, {"description": "Section A: rows 1-2 x seats 1-3\nnonsense"})
    assert bad.status_code == 200
    assert "Nothing was saved" in bad.content.decode() and "Line 2:" in bad.content.decode()
    assert not Section.objects.filter(venue=venue).exists()
    done = staff.post(
        url,
        {"description": "Section A: rows 1-2 x seats 1-3\nStanding Floor: capacity 9"},
        follow=True,
    )
    assert "2 section(s), 6 seat(s)" in " ".join(messages_of(done))
    page = done.content.decode()  # the venue's page, with the plan drawn
    assert page.count('class="plan-seat') == 6 and "Standing · 9" in page
    assert "css/venue-plan.css" in page
    assert VenueSeat.objects.filter(section__venue=venue).count() == 6


def test_plan_from_csv_in_admin(staff):
    venue = VenueFactory(plan="")
    url = reverse("admin:events_venue_plan_csv", args=[venue.pk])
    upload = SimpleUploadedFile(
        "plan.csv", b"section,row,number,x,y,accessible,restricted_view\nP,A,1,1,1,yes,no\n"
    )
    staff.post(url, {"file": upload}, follow=True)
    seat = VenueSeat.objects.get(section__venue=venue)
    assert (seat.section.name, seat.row, seat.number, seat.accessible) == ("P", "A", 1, True)
    bad = SimpleUploadedFile(
        "plan.csv", b"section,row,number,x,y,accessible,restricted_view\nP,A\n"
    )
    assert "Line 2: expected 7 columns" in staff.post(url, {"file": bad}).content.decode()


def _event_form(venue, **extra):
    starts = timezone.now() + timedelta(days=20)
    return {
        "name": "Jazz night",
        "venue": venue.pk,
        "category": "CONCERT",
        "starts_at_0": starts.strftime("%Y-%m-%d"),
        "starts_at_1": "20:00:00",
        "on_sale_at_0": (starts - timedelta(days=10)).strftime("%Y-%m-%d"),
        "on_sale_at_1": "10:00:00",
        "description": "",
        "price_categories-TOTAL_FORMS": 2,
        "price_categories-INITIAL_FORMS": 0,
        "price_categories-0-code": "A",
        "price_categories-0-name": "Front",
        "price_categories-0-price": "50.00",
        "price_categories-0-currency": "EUR",
        "price_categories-0-colour": "#aa0000",
        "price_categories-1-code": "GA",
        "price_categories-1-name": "Standing",
        "price_categories-1-price": "20.00",
        "price_categories-1-currency": "EUR",
        "price_categories-1-colour": "#15803d",
        **extra,
    }


def test_staff_create_price_assign_publish_and_cancel_an_event(staff):
    venue = VenueFactory()
    url = reverse("admin:events_event_add")
    no_prices = _event_form(venue, **{"price_categories-TOTAL_FORMS": 0})
    assert "at least one price category" in staff.post(url, no_prices).content.decode()
    past = _event_form(venue, starts_at_0="2001-01-01", on_sale_at_0="2000-01-01")
    assert "must start in the future" in staff.post(url, past).content.decode()
    assert not Event.objects.exists()

    staff.post(url, _event_form(venue), follow=True)
    event = Event.objects.get()
    assert event.status == EventStatus.DRAFT
    assert set(event.price_categories.values_list("code", flat=True)) == {"A", "GA"}

    change = reverse("admin:events_event_change", args=[event.pk])
    form = _event_form(
        venue,
        **{
            "price_categories-INITIAL_FORMS": 2,
            "price_categories-0-id": event.price_categories.get(code="A").pk,
            "price_categories-0-event": event.pk,
            "price_categories-1-id": event.price_categories.get(code="GA").pk,
            "price_categories-1-event": event.pk,
        },
    )
    moved_to_the_past = staff.post(change, {**form, "starts_at_0": "2001-01-01"})
    assert "must start in the future" in moved_to_the_past.content.decode()
    other_venue = VenueFactory()
    staff.post(change, {**form, "venue": other_venue.pk})
    event.refresh_from_db()
    assert event.venue == venue  # read-only once created: the rules name its sections
    overlap = staff.post(change, {**form, "assignments": "A: Stalls\nA: Stalls rows 1-2"})
    assert "overlaps rule 1" in overlap.content.decode()
    assert not CategoryAssignment.objects.exists()
    rules = "A: Stalls\nA: Balcony rows a-b\nGA: Floor"
    saved = staff.post(change, {**form, "assignments": rules}, follow=True)
    assert "Categories assigned to 35 seat(s) and standing area(s)." in messages_of(saved)
    assert CategoryAssignment.objects.count() == 3
    assert "A: Balcony rows A-B" in staff.get(change).content.decode()

    changelist = reverse("admin:events_event_changelist")
    published = staff.post(
        changelist, {"action": "put_on_sale", "_selected_action": [event.pk]}, follow=True
    )
    assert "Jazz night is on sale." in messages_of(published)
    page = staff.get(change).content.decode()
    assert "A — Front: 34 seat(s), 0 standing" in page and 'name="assignments"' not in page
    confirm = staff.post(changelist, {"action": "cancel", "_selected_action": [event.pk]})
    assert "No live bookings." in confirm.content.decode()
    cancelled = staff.post(
        changelist,
        {"action": "cancel", "_selected_action": [event.pk], "confirm": "yes"},
        follow=True,
    )
    assert "Jazz night is cancelled: 0 booking(s) cancelled, 0 refund(s) queued." in messages_of(
        cancelled
    )
    event.refresh_from_db()
    assert event.status == EventStatus.CANCELLED


def test_put_on_sale_says_what_is_unpriced(staff):
    event = EventFactory(assignments=(), publish=False)
    response = staff.post(
        reverse("admin:events_event_changelist"),
        {"action": "put_on_sale", "_selected_action": [event.pk]},
        follow=True,
    )
    assert any("no price category for 24 seats in Stalls" in m for m in messages_of(response))


def test_plan_builders_need_the_change_permission(client):
    from django.contrib.auth.models import Permission

    from tests.factories import UserFactory

    viewer = UserFactory(username="viewer", is_staff=True)
    viewer.user_permissions.set(Permission.objects.filter(codename="view_venue"))
    client.force_login(viewer)
    venue = VenueFactory(plan="Section A: rows 1-2 x seats 1-2")
    for name in ("admin:events_venue_plan_grid", "admin:events_venue_plan_csv"):
        url = reverse(name, args=[venue.pk])
        assert client.get(url).status_code == 403
        response = client.post(url, {"description": "Section B: rows 1-9 x seats 1-9"})
        assert response.status_code == 403
    assert list(Section.objects.filter(venue=venue).values_list("name", flat=True)) == ["A"]
