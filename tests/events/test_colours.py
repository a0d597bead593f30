"""Issue 31 item 3: the seat plan's colours by WCAG 2.x: the contrast function at known values,
the ink a chosen seat's tick is drawn in, and the check staff meet when saving a category
colour in the admin."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from events.colours import (
    MIN_CONTRAST,
    contrast_ratio,
    ink_for,
    relative_luminance,
    validate_category_colour,
)
from events.models import Event
from tests.events.factories import VenueFactory
from tests.events.test_event_admin import _event_form


def test_contrast_at_known_values():
    assert relative_luminance("#000000") == 0 and relative_luminance("#ffffff") == 1
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21)
    assert contrast_ratio("#ffffff", "#000000") == pytest.approx(21)  # order does not matter
    assert contrast_ratio("#1d4ed8", "#1d4ed8") == pytest.approx(1)
    assert contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # WCAG's grey
    # The case: the old "Your choice" blue on category B's blue.
    assert contrast_ratio("#0b5cad", "#1d4ed8") < 1.5


@pytest.mark.parametrize(
    "colour",
    [
        "#1d4ed8",
        "#0b5cad",
        "#2563eb",
        "#b91c1c",
        "#7c3aed",
        "#15803d",
        "#777777",
        "#ffff00",
        "#000000",
        "#ffffff",
        "#808080",
    ],
)
def test_the_tick_ink_contrasts_with_every_colour(colour):
    # Mid greys are the worst case for black-or-white ink: about 4.5:1, well above 3:1.
    assert contrast_ratio(ink_for(colour), colour) >= 4.4 > MIN_CONTRAST


@pytest.mark.parametrize("colour", ["#1d4ed8", "#2563eb", "#b91c1c", "#15803d", "#111827"])
def test_dark_category_colours_are_accepted(colour):
    validate_category_colour(colour)


@pytest.mark.parametrize("colour", ["#facc15", "#ffffff", "#e5e7eb", "#00aa00", "#a5b4fc"])
def test_light_category_colours_are_refused_with_the_reason(colour):
    with pytest.raises(ValidationError) as refused:
        validate_category_colour(colour)
    message = refused.value.messages[0]
    assert colour in message and "too light for the seat plan" in message and "3:1" in message


@pytest.mark.django_db
def test_the_admin_refuses_a_light_colour_and_saves_a_dark_one(client, staff_user):
    client.force_login(staff_user)
    venue = VenueFactory()
    url = reverse("admin:events_event_add")
    refused = client.post(url, _event_form(venue, **{"price_categories-1-colour": "#fde68a"}))
    page = refused.content.decode()
    assert refused.status_code == 200 and "#fde68a is too light for the seat plan" in page
    assert not Event.objects.exists()
    client.post(url, _event_form(venue), follow=True)
    assert Event.objects.get().price_categories.get(code="GA").colour == "#15803d"
