from django import forms
from django.conf import settings

from bookings import catalogue
from bookings.idempotency import MAX_KEY_LENGTH
from bookings.services import is_printable_name


class HoldForm(forms.Form):
    """The seat picker's submission: exactly one seat and one name per passenger."""

    fare_class = forms.ChoiceField(choices=catalogue.class_choices())
    passengers = forms.IntegerField(min_value=1)
    # Drawn fresh with each picker page: two submissions of one drawing are one hold.  Optional
    # so a form from a page drawn before this field existed still works.
    idempotency_key = forms.CharField(required=False, max_length=MAX_KEY_LENGTH)

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
            raise forms.ValidationError(f"At most {limit} passengers can be booked together.")
        if len(self.seats) != wanted:
            raise forms.ValidationError(
                f"Pick {wanted} seat{'s' if wanted > 1 else ''} (you picked {len(self.seats)})."
            )
        if len(self.names) != wanted or not all(self.names):
            raise forms.ValidationError("Enter the full name of every passenger.")
        if any(len(n) > 120 for n in self.names):
            raise forms.ValidationError("A passenger name is at most 120 characters.")
        if not all(is_printable_name(n) for n in self.names):
            raise forms.ValidationError("A passenger name cannot contain control characters.")
        return data
