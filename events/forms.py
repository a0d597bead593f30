from django import forms

from events.models import EventCategory
from events.selectors import event_cities


class EventSearchForm(forms.Form):
    """Every filter optional: an empty search lists everything coming up."""

    city = forms.ChoiceField(label="City", required=False)
    date = forms.DateField(
        label="Date", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    category = forms.ChoiceField(
        label="Category",
        required=False,
        choices=[("", "Any category"), *EventCategory.choices],
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Read per request: the cities with something on change as events are published.
        self.fields["city"].choices = [("", "Any city")] + [(c, c) for c in event_cities()]
