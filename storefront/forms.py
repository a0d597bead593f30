from django import forms
from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from bookings import catalogue
from bookings.passengers import is_printable_name
from kernel.idempotency import MAX_KEY_LENGTH


class HoldForm(forms.Form):
    """The seat picker's submission: exactly one seat and one name per passenger."""

    fare_class = forms.ChoiceField(choices=catalogue.class_choices())
    passengers = forms.IntegerField(min_value=1)
    # A booking class nested in the fare class (docs/fare-classes.md); blank: the fare's own.
    booking_class = forms.CharField(required=False, max_length=10)
    # Drawn fresh with each picker page: two submissions of one drawing are one hold.  Optional
    # so a form from a page drawn before this field existed still works.
    idempotency_key = forms.CharField(required=False, max_length=MAX_KEY_LENGTH)
    # The exit-row conditions, confirmed for the passengers seated in an exit row.
    exit_row_confirmed = forms.BooleanField(required=False)

    def __init__(self, data, *args, **kwargs):
        super().__init__(data, *args, **kwargs)
        self.seats = [s.strip() for s in data.getlist("seats") if s.strip()]
        self.names = [n.strip() for n in data.getlist("names")]

    def clean(self):
        data = super().clean()
        wanted = data.get("passengers")
        if wanted is None:
            return data
        limit = settings.SEATKEEPER["MAX_PASSENGERS"]
        if wanted > limit:
            raise forms.ValidationError(
                _("At most %(limit)d passengers can be booked together.") % {"limit": limit}
            )
        if len(self.seats) != wanted:
            raise forms.ValidationError(
                ngettext(
                    "Pick %(wanted)d seat (you picked %(picked)d).",
                    "Pick %(wanted)d seats (you picked %(picked)d).",
                    wanted,
                )
                % {"wanted": wanted, "picked": len(self.seats)}
            )
        if len(self.names) != wanted or not all(self.names):
            raise forms.ValidationError(_("Enter the full name of every passenger."))
        if any(len(n) > 120 for n in self.names):
            raise forms.ValidationError(_("A passenger name is at most 120 characters."))
        if not all(is_printable_name(n) for n in self.names):
            raise forms.ValidationError(_("A passenger name cannot contain control characters."))
        return data
