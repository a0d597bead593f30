from django import forms
from django.conf import settings
from django.utils.translation import gettext as _

from flights.models import FareClass


class JoinForm(forms.Form):
    fare_class = forms.ChoiceField(choices=FareClass.choices)
    party_size = forms.IntegerField(min_value=1)

    def clean_party_size(self):
        size = self.cleaned_data["party_size"]
        limit = settings.SEATKEEPER["MAX_PASSENGERS"]
        if size > limit:
            raise forms.ValidationError(
                _("A waiting party has at most %(limit)d passengers.") % {"limit": limit}
            )
        return size


class LeaveForm(forms.Form):
    fare_class = forms.ChoiceField(choices=FareClass.choices)
