from datetime import timedelta

import pytest
from django.utils import timezone

from events.models import EventCategory
from events.services import cancel_event
from tests.events.factories import EventFactory, VenueFactory

pytestmark = pytest.mark.django_db


def test_list_shows_upcoming_events_and_searches(client):
    berlin = VenueFactory(city="Berlin", name="Philharmonie")
    munich = VenueFactory(city="Munich", name="Olympiahalle")
    EventFactory(name="Symphony", venue=berlin)
    EventFactory(name="Cup final", venue=munich, category=EventCategory.SPORT)
    page = client.get("/events/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Symphony" in html and "Cup final" in html and 'From <span class="price">€30.00' in html
    assert '<option value="Munich">Munich</option>' in html

    page = client.get("/events/", {"city": "Munich", "category": "SPORT", "date": ""})
    html = page.content.decode()
    assert "Cup final" in html and "Symphony" not in html


def test_list_says_what_is_wrong_with_a_bad_search(client):
    EventFactory(name="Symphony")
    page = client.get("/events/", {"city": "Atlantis", "date": "31.02."})
    html = page.content.decode()
    assert page.status_code == 200
    assert "Please correct the search." in html and "Symphony" not in html
    assert "No events found." in html


def test_detail_page_shows_prices_sections_and_sale_time(client):
    event = EventFactory(name="Symphony", on_sale_at=timezone.now() + timedelta(days=2))
    html = client.get(f"/events/{event.pk}/").content.decode()
    assert "Symphony" in html and "Tickets go on sale" in html
    assert "A — Front stalls" in html and "€80.00" in html and "12 places" in html
    assert "Floor</strong>:\n      standing, 50 places" in html
    cancel_event(event_id=event.pk)
    assert "This event has been cancelled." in client.get(f"/events/{event.pk}/").content.decode()


def test_event_pages_in_german_and_russian(client):
    """Labels, categories, money and dates follow the reader's language (issue 15)."""
    berlin = VenueFactory(city="Berlin", name="Philharmonie")
    event = EventFactory(
        name="Symphony", venue=berlin, on_sale_at=timezone.now() + timedelta(days=2)
    )
    de = client.get("/events/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Veranstaltung finden" in de and "Alle Städte" in de and "Konzert" in de
    assert 'Ab <span class="price">30,00\xa0€</span>' in de and "Im Verkauf ab" in de
    de = client.get(f"/events/{event.pk}/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Der Vorverkauf beginnt am" in de and "80,00\xa0€" in de and "12 Plätze" in de
    assert "Stehplätze, 50 Plätze" in de and "24 Sitzplätze, 2 barrierefrei" in de
    assert "Die Bühne liegt oben im Plan" in de and "Reihe 1, Platz 1" in de
    ru = client.get(f"/events/{event.pk}/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "Продажа билетов начнётся" in ru and "80,00\xa0€" in ru
    # Russian plurals: many for 12, 10 and 50, few for 24.
    assert "12 мест" in ru and "24 места" in ru and "стоячие места, 50 мест" in ru
    assert "10 мест, 2 с ограниченным обзором" in ru  # noqa: RUF001 - Russian text
    bad = client.get("/events/", {"date": "31.02."}, HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "Пожалуйста, исправьте параметры поиска." in bad and "Мероприятия не найдены." in bad


def test_draft_event_page_is_404(client):
    draft = EventFactory(publish=False, assignments=())
    assert client.get(f"/events/{draft.pk}/").status_code == 404


def test_detail_page_draws_the_plan_with_category_colours_and_the_stage(client):
    # Before the sale opens the plan is a drawing; once open it is the seat picker
    # (tests/events/test_event_buying_pages.py).
    event = EventFactory(name="Symphony", on_sale_at=timezone.now() + timedelta(days=2))
    html = client.get(f"/events/{event.pk}/").content.decode()
    # The seat picker's drawing (events/_seat_plan.html), as a picture: no checkboxes.
    assert 'class="venue-plan pick-plan stage-top plan-preview" aria-hidden="true"' in html
    assert html.count('class="seat-face"') == 24 + 10 and 'type="checkbox"' not in html
    assert html.count("--cat: #b91c1c") == 12  # category A's seats
    assert "24 seats, 2 accessible" in html and "10 seats, 2 with a restricted view" in html
    assert "Standing · 50 · GA" in html


def test_seat_plan_rows_front_to_back_with_aisles_as_gaps():
    from events.selectors import seat_plan

    event = EventFactory()
    stalls, balcony, floor = seat_plan(event=event)["sections"]
    assert stalls["width"] == 7  # 6 seats and the aisle after seat 3
    first = stalls["rows"][0]
    assert first["label"] == "1" and first["cells"][3] is None
    assert [c["number"] for c in first["cells"] if c] == [1, 2, 3, 4, 5, 6]
    assert first["cells"][0]["category"]["code"] == "A"
    assert stalls["rows"][3]["cells"][0]["accessible"] is True
    assert [r["label"] for r in balcony["rows"]] == ["A", "B"]
    assert floor["category"]["code"] == "GA" and floor["capacity"] == 50


def test_a_past_date_is_explained(client):
    html = client.get("/events/", {"date": "2001-01-01"}).content.decode()
    assert "That date is in the past." in html
