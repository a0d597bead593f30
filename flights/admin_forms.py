"""The flight's change form: times typed as the airports' wall clocks (departure at the origin,
arrival at the destination), exit rows as a list of row numbers."""

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from flights.flight_numbers import flight_number_taken
from flights.models import Flight
from kernel.local_time_admin import LocalTimeFormMixin


class ExitRowsField(forms.CharField):
    """ "12, 13" in, [12, 13] out: row numbers, as staff read them off the cabin layout."""

    def prepare_value(self, value):
        if isinstance(value, list | tuple):
            return ", ".join(str(row) for row in value)
        return value

    def to_python(self, value):
        text = (super().to_python(value) or "").replace(";", ",")
        rows = []
        for part in text.replace(" ", ",").split(","):
            if not part:
                continue
            if not part.isdigit() or not 0 < int(part) < 1000:
                raise forms.ValidationError(
                    _("“%(part)s” is not a row number: type numbers, e.g. 12, 13.") % {"part": part}
                )
            rows.append(int(part))
        return sorted(set(rows))

    def has_changed(self, initial, data):
        return sorted(initial or []) != self.to_python(data)


class FlightForm(LocalTimeFormMixin, forms.ModelForm):
    local_time_zones = {
        "departure_at": "origin",
        "arrival_at": "destination",
        "gate_closes_at": "origin",
        "online_checkin_opens_at": "origin",
        "online_checkin_closes_at": "origin",
    }
    exit_rows = ExitRowsField(
        required=False,
        label=gettext_lazy("Exit rows"),
        help_text=gettext_lazy(
            "Row numbers of the emergency exit rows, separated by commas, e.g. 12, 13."
        ),
    )

    def clean(self):
        data = super().clean()
        number = (data.get("code"), data.get("departure_at"))
        own = (self.instance.code, self.instance.departure_at) if self.instance.pk else None
        if all(number) and number != own:
            code, departure_at = number
            if flight_number_taken(code=code, departure_at=departure_at):
                self.add_error(
                    "code", _("Flight %(code)s already departs at that time.") % {"code": code}
                )
        return data

    class Meta:
        model = Flight
        fields = [
            "code",
            "carrier",
            "origin",
            "destination",
            "departure_at",
            "arrival_at",
            "status",
            "gate",
            "exit_rows",
            "gate_closes_at",
            "online_checkin_opens_at",
            "online_checkin_closes_at",
        ]
