from datetime import timedelta

from django import forms
from django.conf import settings
from django.core.validators import MaxValueValidator
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from flights.models import Airport, FareClass
from flights.selectors import SEARCHABLE_DAYS


def _limit_party_size(field: forms.IntegerField) -> None:
    # Read at request time, not import time: tests and deployments may change the limit.
    limit = settings.SEATKEEPER["MAX_PASSENGERS"]
    field.validators.append(MaxValueValidator(limit))
    field.widget.attrs["max"] = limit


class AirportChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Airport) -> str:
        return f"{obj.local_city} — {obj.local_name} ({obj.code})"


class SearchForm(forms.Form):
    origin = AirportChoiceField(queryset=Airport.objects.order_by("city"), label=_("From"))
    destination = AirportChoiceField(queryset=Airport.objects.order_by("city"), label=_("To"))
    date = forms.DateField(label=_("Date"), widget=forms.DateInput(attrs={"type": "date"}))
    passengers = forms.IntegerField(label=_("Passengers"), min_value=1, initial=1)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _limit_party_size(self.fields["passengers"])

    def clean_date(self):
        day = self.cleaned_data["date"]
        # Earlier than yesterday in UTC is in the past at every airport on Earth; the search
        # itself drops flights that already left.
        if day < timezone.now().date() - timedelta(days=1):
            raise forms.ValidationError(_("That date is in the past."))
        if day > SEARCHABLE_DAYS[1]:  # its local midnight-to-midnight overflows the calendar
            raise forms.ValidationError(_("That date is too far in the future."))
        return day

    def clean(self):
        data = super().clean()
        if data.get("origin") and data.get("origin") == data.get("destination"):
            self.add_error("destination", _("Choose a destination different from the origin."))
        return data


class PickerQuery(forms.Form):
    """The seat picker's query string: which fare class, and how many seats to pick."""

    fare = forms.ChoiceField(choices=FareClass.choices)
    passengers = forms.IntegerField(min_value=1)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _limit_party_size(self.fields["passengers"])
