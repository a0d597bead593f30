"""Issue 31: the event admin refuses a price category code with a space ("VIP 1") on the
field itself, in the API's words, and creates nothing."""

import pytest
from django.urls import reverse

from events.models import Event
from kernel.web.fields import CLASS_CODE_MESSAGE
from tests.events.factories import VenueFactory
from tests.events.test_event_admin import _event_form

pytestmark = pytest.mark.django_db


def test_a_price_category_code_with_a_space_is_refused_with_the_apis_message(client, staff_user):
    client.force_login(staff_user)
    url = reverse("admin:events_event_add")
    form = _event_form(VenueFactory(), **{"price_categories-0-code": "VIP 1"})

    refused = client.post(url, form)

    assert refused.status_code == 200 and str(CLASS_CODE_MESSAGE) in refused.text
    assert not Event.objects.exists()
    # control: the same form with a code of the pattern is saved
    client.post(url, form | {"price_categories-0-code": "VIP1"})
    assert Event.objects.get().price_categories.filter(code="VIP1").exists()
