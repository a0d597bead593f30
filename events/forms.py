from datetime import timedelta

from django import forms
from django.core.validators import MaxValueValidator
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from bookings.passengers import is_printable_name
from events.models import EventCategory
from events.picker import max_tickets
from events.selectors import event_cities
from kernel.idempotency import MAX_KEY_LENGTH


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


def _clean_name(name: str) -> str:
    name = name.strip()
    if not is_printable_name(name):
        raise forms.ValidationError(_("A name cannot contain control characters."))
    return name


class SeatHoldForm(forms.Form):
    """The seat picker: the picked seats (engine numbers), the name on the tickets, and the
    price category the page worked out (empty without JavaScript: the server finds it)."""

    name = forms.CharField(label=_("Name on the tickets"), max_length=120)
    category = forms.CharField(required=False, max_length=10)
    idempotency_key = forms.CharField(required=False, max_length=MAX_KEY_LENGTH)

    def __init__(self, data, *args, **kwargs):
        super().__init__(data, *args, **kwargs)
        self.seats = [s.strip().upper() for s in data.getlist("seats") if s.strip()]

    def clean_name(self):
        return _clean_name(self.cleaned_data["name"])

    def clean(self):
        data = super().clean()
        if not self.seats:
            raise forms.ValidationError(_("Pick at least one seat."))
        if len(self.seats) > max_tickets():
            raise forms.ValidationError(
                _("At most %(limit)d tickets can be booked together.") % {"limit": max_tickets()}
            )
        if len(set(self.seats)) != len(self.seats):
            raise forms.ValidationError(_("A seat is listed more than once."))
        return data


class StandingHoldForm(forms.Form):
    """A standing area's form: which area (its inventory class), how many, whose name."""

    area = forms.ChoiceField(label=_("Standing area"))
    quantity = forms.IntegerField(label=_("Number of tickets"), min_value=1)
    name = forms.CharField(label=_("Name on the tickets"), max_length=120)
    idempotency_key = forms.CharField(required=False, max_length=MAX_KEY_LENGTH)

    def __init__(self, data, *args, areas: list[str], **kwargs):
        super().__init__(data, *args, **kwargs)
        self.fields["area"].choices = [(a, a) for a in areas]
        self.fields["quantity"].validators.append(MaxValueValidator(max_tickets()))

    def clean_name(self):
        return _clean_name(self.cleaned_data["name"])


class BestAvailableForm(forms.Form):
    """Best available: how many seats of which category, how many of them wheelchair places,
    whose name (the engine picks the seats: bookings.best_available)."""

    category = forms.ChoiceField(label=_("Price category"))
    quantity = forms.IntegerField(label=_("Number of seats"), min_value=1)
    accessible = forms.IntegerField(
        label=_("Of which wheelchair places"), min_value=0, required=False
    )
    name = forms.CharField(label=_("Name on the tickets"), max_length=120)
    idempotency_key = forms.CharField(required=False, max_length=MAX_KEY_LENGTH)

    def __init__(self, data, *args, categories: list[str], **kwargs):
        super().__init__(data, *args, **kwargs)
        self.fields["category"].choices = [(c, c) for c in categories]
        self.fields["quantity"].validators.append(MaxValueValidator(max_tickets()))

    def clean_name(self):
        return _clean_name(self.cleaned_data["name"])

    def clean(self):
        data = super().clean()
        accessible = data.get("accessible") or 0
        if data.get("quantity") is not None and accessible > data["quantity"]:
            raise forms.ValidationError(_("Wheelchair places are part of the seats asked for."))
        data["accessible"] = accessible
        return data


class WaitlistForm(forms.Form):
    """Join (or leave) the waitlist of one of the event's inventory classes."""

    fare_class = forms.ChoiceField(label=_("Tickets"))
    party_size = forms.IntegerField(label=_("Party size"), min_value=1, required=False)
    # A seated party's wishes (issue 29): the sections it accepts and a price ceiling.
    sections = forms.CharField(label=_("Sections you accept"), required=False, max_length=400)
    max_seat_price = forms.DecimalField(
        label=_("Most you pay per seat"), required=False, min_value=0, decimal_places=2
    )

    def __init__(self, data, *args, classes: list[str], leaving: bool = False, **kwargs):
        super().__init__(data, *args, **kwargs)
        self.fields["fare_class"].choices = [(c, c) for c in classes]
        self.leaving = leaving

    def clean_sections(self):
        """Section names, comma separated (empty: any)."""
        return [s.strip() for s in self.cleaned_data["sections"].split(",") if s.strip()]

    def clean_party_size(self):
        size = self.cleaned_data["party_size"]
        if self.leaving:
            return size
        if size is None:
            raise forms.ValidationError(_("Say how many tickets you are waiting for."))
        if size > max_tickets():
            raise forms.ValidationError(
                _("A waiting party has at most %(limit)d people.") % {"limit": max_tickets()}
            )
        return size
