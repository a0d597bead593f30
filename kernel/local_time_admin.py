"""Admin times in the place's own zone: staff type and read "20:00" as the clock on the wall
of the venue or airport, never as UTC.

A form lists its local fields and the form field (a relation) whose row carries the zone
(`local_time_zones = {"starts_at": "venue"}`).  Its date-time fields then carry the wall time
(naive) while the form is shown and compared, and `clean()` makes each aware in the zone of the
relation as chosen *in this form* (a new event's venue, a flight's changed origin).  The admin
mixin shows every other time on the change page (read-only fields) in the page's zone and names
the zone at the top of the form.
"""

from __future__ import annotations

import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django import forms
from django.contrib import admin
from django.utils import timezone
from django.utils.translation import gettext as _


def zone_label(zone: str, *, at: datetime.datetime | None = None) -> str:
    """ "Europe/Berlin (CET)": the IANA name people can look up and the abbreviation they read
    on clocks (which differs in summer)."""
    moment = at or timezone.now()
    return f"{zone} ({moment.astimezone(ZoneInfo(zone)).tzname()})"


def local_text(value: datetime.datetime | None, zone: str) -> str:
    """A moment as the place's wall time with the zone named: "2026-12-24 20:00 CET"."""
    if value is None:
        return "—"
    local = value.astimezone(ZoneInfo(zone))
    return f"{local:%Y-%m-%d %H:%M} {local.tzname()}"


class WallClockDateTimeField(forms.SplitDateTimeField):
    """The admin's date + time pair, kept as the wall time typed (naive): the form decides the
    zone once it knows the place."""

    def compress(self, data_list):
        if data_list and data_list[0] is not None and data_list[1] is not None:
            return datetime.datetime.combine(*data_list)
        return super().compress(data_list)


class LocalTimeFormMixin:
    #: form field -> the relation (form field or instance attribute) whose row names the zone
    local_time_zones: dict[str, str] = {}

    def zone_of(self, related) -> str | None:
        """The IANA zone of a related row (an airport, a venue); None if not known."""
        return getattr(related, "time_zone", None) or None

    def _related(self, relation: str, data: dict | None):
        if data is not None and relation in data:
            return data[relation]
        return getattr(self.instance, relation, None) if _has(self.instance, relation) else None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, relation in self.local_time_zones.items():
            field = self.fields.get(name)
            if field is None:
                continue
            zone = self.zone_of(self._related(relation, None))
            wall = WallClockDateTimeField(
                required=field.required,
                label=field.label,
                widget=field.widget,
                help_text=_local_help(field.help_text, zone, self.fields.get(relation)),
            )
            self.fields[name] = wall
            # The admin's date and time boxes share one label: each says which half it is.
            for part, widget in zip((_("date"), _("time")), wall.widget.widgets, strict=False):
                widget.attrs.setdefault("aria-label", f"{field.label}: {part}")
            value = getattr(self.instance, name, None) if self.instance.pk else None
            if value is not None and zone:
                self.initial[name] = timezone.make_naive(value, ZoneInfo(zone))

    def clean(self):
        data = super().clean()
        for name, relation in self.local_time_zones.items():
            wall = data.get(name)
            if name not in self.fields or not isinstance(wall, datetime.datetime):
                continue
            if timezone.is_aware(wall):
                continue
            zone = self.zone_of(self._related(relation, data))
            if zone is None:
                # The place itself was refused (its own error says so); nothing to place.
                data.pop(name)
                continue
            try:
                data[name] = timezone.make_aware(wall, ZoneInfo(zone))
            except ZoneInfoNotFoundError:
                self.add_error(
                    name, _("The place's time zone %(zone)s is unknown.") % {"zone": zone}
                )
        return data


def _has(instance, relation: str) -> bool:
    try:
        return getattr(instance, relation, None) is not None
    except Exception:  # an unsaved row's empty relation raises RelatedObjectDoesNotExist
        return False


def _local_help(help_text: str, zone: str | None, relation_field) -> str:
    if zone:
        note = _("Local time at the place: %(zone)s.") % {"zone": zone_label(zone)}
    else:
        place = relation_field.label if relation_field is not None else _("the place")
        note = _("Local time at the %(place)s chosen here.") % {"place": str(place).lower()}
    return f"{help_text} {note}".strip()


class LocalTimeAdminMixin:
    """Change pages shown in the place's zone: read-only times there, and the zone named on
    top of the form (`page_zone`)."""

    change_form_template = "admin/local_time_change_form.html"

    def page_zone(self, obj) -> str | None:
        return None

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        obj = self.get_object(request, object_id) if object_id else None
        zone = self.page_zone(obj) if obj is not None else None
        extra_context = {**(extra_context or {}), "local_zone": zone and zone_label(zone)}
        if zone is None:
            return super().changeform_view(request, object_id, form_url, extra_context)
        with timezone.override(ZoneInfo(zone)):
            response = super().changeform_view(request, object_id, form_url, extra_context)
            if hasattr(response, "render"):
                response.render()  # the template reads the zone while it is active
            return response


def local_column(field: str, zone_of, *, description: str, ordering: str | None = None):
    """A changelist column showing `field` in the zone `zone_of(row)` names, zone named."""

    @admin.display(description=description, ordering=ordering or field)
    def column(model_admin, obj):
        zone = zone_of(obj)
        value = getattr(obj, field)
        if zone is None or value is None:
            return value if value is not None else "—"
        return local_text(value, zone)

    return column
