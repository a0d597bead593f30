from datetime import timedelta

from django import forms
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from events.models import EventCategory
from events.selectors import event_cities


class EventSearchForm(forms.Form):
    """Every filter optional: an empty search lists everything coming up."""

    city = forms.ChoiceField(label=_("City"), required=False)
    date = forms.DateField(
        label=_("Date"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    category = forms.ChoiceField(
        label=_("Category"),
        required=False,
        choices=[("", _("Any category")), *EventCategory.choices],
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Read per request: the cities with something on change as events are published.
        self.fields["city"].choices = [("", _("Any city"))] + [(c, c) for c in event_cities()]

    def clean_date(self):
        day = self.cleaned_data["date"]
        # Earlier than yesterday in UTC is in the past at every venue on Earth.
        if day is not None and day < timezone.now().date() - timedelta(days=1):
            raise forms.ValidationError(_("That date is in the past."))
        return day
