from django import forms
from django.conf import settings
from django.utils.translation import gettext as _

from bookings import catalogue
from bookings.models import SaleKind


def fare_classes() -> list[tuple[str, str]]:
    """A flight's fare classes, from the flights catalogue (asked when a form is built)."""
    return catalogue.class_choices(SaleKind.FLIGHT)


class JoinForm(forms.Form):
    fare_class = forms.ChoiceField(choices=fare_classes)
    party_size = forms.IntegerField(min_value=1)

    def clean_party_size(self):
        size = self.cleaned_data["party_size"]
        limit = settings.SEATKEEPER["MAX_PASSENGERS"]
        if size > limit:
            raise forms.ValidationError(
                _("A waiting party has at most %(limit)d passengers.") % {"limit": limit}
            )
        return size


class QueueWaitlistForm(JoinForm):
    """The queue page's one-click waitlist: the classes of the protected sale itself (a
    flight's fare classes, an event's categories), not always a flight's."""

    def __init__(self, data, *args, classes: list[tuple[str, str]], **kwargs):
        super().__init__(data, *args, **kwargs)
        self.fields["fare_class"].choices = classes


class LeaveForm(forms.Form):
    fare_class = forms.ChoiceField(choices=fare_classes)
