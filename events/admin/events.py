"""Staff admin for events: categories, prices, assignments, putting on sale, calling off
(`events.admin.call_off`); once on sale, the sale's inventory per category and its seat map,
blocking and unblocking seats (`storefront.seat_toggle_admin`).  Thin: forms parse, services
write."""

from __future__ import annotations

from datetime import timedelta

from django import forms
from django.contrib import admin, messages
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from events import plan_assignments, sale_overview, services
from events.admin.call_off import CANCEL_BOOKINGS, call_off_events
from events.models import (
    DEFAULT_EVENT_DURATION,
    CategoryAssignment,
    Event,
    EventStatus,
    PriceCategory,
)
from events.selectors import category_places, unpriced_places
from kernel.errors import DomainError
from kernel.local_time_admin import LocalTimeAdminMixin, LocalTimeFormMixin, local_text
from kernel.web.fields import class_code_validator
from storefront.seat_toggle_admin import SeatToggleAdminMixin


class PriceCategoryFormSet(forms.BaseInlineFormSet):
    def clean(self):
        super().clean()
        if any(self.errors) or "code" not in self.form.base_fields:  # read-only: not on sale
            return
        specs = [
            services.PriceCategorySpec(
                code=f.cleaned_data["code"],
                name=f.cleaned_data["name"],
                price=f.cleaned_data["price"],
                currency=f.cleaned_data["currency"],
                colour=f.cleaned_data["colour"],
            )
            for f in self.forms
            if f.cleaned_data and not f.cleaned_data.get("DELETE")
        ]
        try:
            services.check_price_categories(specs)
        except DomainError as error:
            raise forms.ValidationError(error.detail) from error
        self.specs = specs


class PriceCategoryForm(forms.ModelForm):
    """The code checked as the API checks it (kernel.web.fields), with the field's own message
    beside it, before the formset's rules (capitals first) run."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "code" in self.fields:
            self.fields["code"].validators.append(class_code_validator)
            self.fields["code"].strip = False


class PriceCategoryInline(admin.TabularInline):
    model = PriceCategory
    form = PriceCategoryForm
    formset = PriceCategoryFormSet
    extra = 3
    fields = ["code", "name", "price", "currency", "colour"]

    def _editable(self, obj):
        return obj is None or obj.status == EventStatus.DRAFT

    def has_add_permission(self, request, obj=None):
        return self._editable(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return self._editable(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._editable(obj) and super().has_delete_permission(request, obj)


class EventForm(LocalTimeFormMixin, forms.ModelForm):
    local_time_zones = {"starts_at": "venue", "on_sale_at": "venue"}

    assignments = forms.CharField(
        label="Seat categories",
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "cols": 60, "style": "font-family: monospace"}),
        help_text=(
            "One rule per line: <code>A: Stalls rows 1-5</code>, <code>B: Balcony</code>, "
            "<code>GA: Floor</code> (a standing area is priced whole). Rows count front to "
            "back. Uses the saved price categories: save new ones first."
        ),
    )

    class Meta:
        model = Event
        fields = [
            "name",
            "venue",
            "category",
            "starts_at",
            "duration",
            "on_sale_at",
            "description",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "duration" in self.fields:  # left empty: the default length of a show
            self.fields["duration"].required = False
        if self.instance.pk:
            self.fields["assignments"].initial = "\n".join(
                _rule_text(rule)
                for rule in CategoryAssignment.objects.filter(
                    category__event=self.instance
                ).select_related("category", "section")
            )
        else:
            del self.fields["assignments"]

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        if "duration" in self.fields and not data.get("duration"):
            data["duration"] = DEFAULT_EVENT_DURATION
        if "duration" in self.fields and data["duration"] <= timedelta(0):
            self.add_error("duration", "An event lasts longer than no time at all.")
            return data
        timing = {"name", "category", "starts_at", "on_sale_at"}
        try:
            if not self.instance.pk or timing & set(self.changed_data):
                services.check_new_event(
                    name=data["name"],
                    category=data["category"],
                    starts_at=data["starts_at"],
                    on_sale_at=data["on_sale_at"],
                )
            if self.instance.pk and "assignments" in self.changed_data:
                data["assignment_specs"] = [
                    services.AssignmentSpec(*rule)
                    for rule in plan_assignments.parse_assignments(data["assignments"])
                ]
                services.check_assignments(
                    event=self.instance, assignments=data["assignment_specs"]
                )
        except DomainError as error:
            raise forms.ValidationError(error.detail) from error
        return data


def _rule_text(rule: CategoryAssignment) -> str:
    rows = f" rows {rule.first_row}-{rule.last_row}" if rule.first_row else ""
    return f"{rule.category.code}: {rule.section.name}{rows}"


@admin.register(Event)
class EventAdmin(LocalTimeAdminMixin, SeatToggleAdminMixin, admin.ModelAdmin):
    form = EventForm
    list_display = ["name", "venue", "category", "starts_local", "status", "inventory_summary"]
    list_filter = ["status", "category", "venue__city"]
    search_fields = ["name", "venue__name", "venue__city", "=id"]
    date_hierarchy = "starts_at"
    inlines = [PriceCategoryInline]
    readonly_fields = ["status", "places_per_category", "inventory_overview", "seat_map"]
    actions = ["put_on_sale", "allow_single_seats", "forbid_single_seats", "cancel"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("venue")

    def page_zone(self, obj):
        return obj.venue.time_zone

    def get_fields(self, request, obj=None):
        fields = ["name", "venue", "category", "starts_at", "duration", "on_sale_at", "description"]
        if obj is None:
            return fields
        if obj.status == EventStatus.DRAFT:
            return [*fields, "status", "assignments", "places_per_category"]
        return [*fields, "status", "places_per_category", "inventory_overview", "seat_map"]

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.status != EventStatus.DRAFT:
            # Published: what is being sold (or was) no longer changes here.
            fields = ["name", "venue", "category", "starts_at", "duration", "on_sale_at"]
            return [*fields, "status", "places_per_category", "inventory_overview", "seat_map"]
        if obj is not None:
            # The seat-category rules name the venue's sections: the venue stays.
            return ["venue", *self.readonly_fields]
        return self.readonly_fields

    @admin.display(description="starts (local)", ordering="starts_at")
    def starts_local(self, obj):
        return local_text(obj.starts_at, obj.venue.time_zone)

    @admin.display(description="places per category")
    def places_per_category(self, obj):
        if not obj.pk:
            return "—"
        categories = {c.code: c for c in obj.price_categories.all()}
        found = category_places(event=obj)
        unpriced = unpriced_places(event=obj)
        return format_html(
            "<ul>{}</ul>{}",
            format_html_join(
                "",
                '<li><span style="display:inline-block;width:1em;height:1em;background:{}">'
                "</span> {} — {}: {} seat(s), {} standing</li>",
                (
                    (
                        categories[code].colour,
                        code,
                        categories[code].name,
                        len(places.seats),
                        sum(places.standing.values()),
                    )
                    for code, places in found.items()
                ),
            ),
            format_html("<p>Not priced yet: {}</p>", ", ".join(unpriced)) if unpriced else "",
        )

    @admin.display(description="sold / held / left of capacity")
    def inventory_summary(self, obj):
        return format_html_join(
            " · ",
            "{}: {} / {} / {} of {}",
            (
                (line.code, line.sold, line.held, line.available, line.capacity)
                for line in sale_overview.inventory_overview(event=obj)
            ),
        )

    @admin.display(description="inventory (what the sale engine holds)")
    def inventory_overview(self, obj):
        lines = sale_overview.inventory_overview(event=obj) if obj.pk else []
        if not lines:
            return "Not on sale yet: the inventory is made when the event goes on sale."
        return format_html(
            '<table class="event-inventory"><thead><tr><th scope="col">category</th>'
            '<th scope="col">capacity</th><th scope="col">sold</th><th scope="col">held</th>'
            '<th scope="col">available</th><th scope="col">blocked seats</th></tr></thead>'
            "<tbody>{}</tbody></table>",
            format_html_join(
                "",
                '<tr data-class="{}"><td><span style="display:inline-block;width:1em;'
                'height:1em;background:{}"></span> {}</td><td>{}</td><td>{}</td><td>{}</td>'
                "<td>{}</td><td>{}</td></tr>",
                (
                    (
                        line.code,
                        line.colour,
                        line.label,
                        line.capacity,
                        line.sold,
                        line.held,
                        line.available,
                        line.blocked,
                    )
                    for line in lines
                ),
            ),
        )

    @admin.display(description="seat map")
    def seat_map(self, obj):
        """The sale's seats by section and row: a free seat is a button that blocks it, a
        blocked one a button that unblocks it (POST with the change form's CSRF token, to
        `seat_map_toggle`); held and sold seats are shown, not changed."""
        sections = sale_overview.seat_map(event=obj) if obj.pk else []
        if not sections:
            return "No seats on sale."
        return render_to_string(
            "admin/events/event/_seat_map.html",
            {
                "sections": sections,
                "toggle_url": reverse("admin:events_event_seat_toggle", args=[obj.pk]),
            },
        )

    def save_model(self, request, obj, form, change):
        if change:
            super().save_model(request, obj, form, change)
        # A new event is created in save_related, by the service, with its price categories.

    def save_related(self, request, form, formsets, change):
        if change:
            super().save_related(request, form, formsets, change)
            specs = form.cleaned_data.get("assignment_specs")
            if specs is not None:
                try:
                    priced = services.assign_categories(
                        event_id=form.instance.pk, assignments=specs
                    )
                except DomainError as error:  # changed between the form check and now
                    self.message_user(request, error.detail, messages.ERROR)
                else:
                    self.message_user(
                        request, f"Categories assigned to {priced} seat(s) and standing area(s)."
                    )
            return
        data = form.cleaned_data
        prices = next(f.specs for f in formsets if f.model is PriceCategory)
        try:
            event = services.create_event(
                venue=data["venue"],
                name=data["name"],
                category=data["category"],
                starts_at=data["starts_at"],
                on_sale_at=data["on_sale_at"],
                description=data["description"],
                duration=data["duration"],
                price_categories=prices,
            )
        except DomainError as error:
            # Checked by the forms already; this is what changed in between.
            self.message_user(request, error.detail, messages.ERROR)
            raise _Refused from error
        # The admin goes on with the instance its form built (log entry, redirect): it is now
        # the event the service created.
        form.instance.pk = event.pk
        form.instance.status = event.status
        for formset in formsets:  # saved by the service, not by the formsets
            formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except _Refused:
            return redirect(request.get_full_path())

    @admin.action(description="Put selected events on sale", permissions=["change"])
    def put_on_sale(self, request, queryset):
        for event in queryset:
            try:
                services.put_event_on_sale(event_id=event.pk)
            except DomainError as error:
                self.message_user(request, error.detail, messages.ERROR)
            else:
                self.message_user(request, f"{event.name} is on sale.")

    @admin.action(description="Allow holds that leave a single seat", permissions=["change"])
    def allow_single_seats(self, request, queryset):
        self._single_seat_rule(request, queryset, keep=False)

    @admin.action(description="Refuse holds that leave a single seat", permissions=["change"])
    def forbid_single_seats(self, request, queryset):
        self._single_seat_rule(request, queryset, keep=True)

    def _single_seat_rule(self, request, queryset, *, keep: bool) -> None:
        for event in queryset:
            try:
                services.set_single_seat_rule(event_id=event.pk, keep=keep)
            except DomainError as error:
                self.message_user(request, f"{event.name}: {error.detail}", messages.ERROR)
            else:
                self.message_user(
                    request, f"{event.name}: single-seat rule {'on' if keep else 'off'}."
                )

    @admin.action(
        description="Cancel selected events (confirm the refunds first)",
        permissions=["call_off"],
    )
    def cancel(self, request, queryset):
        return call_off_events(self, request, queryset)

    def has_call_off_permission(self, request):
        # One permission name: the admin offers an action to anyone holding *any* of those
        # it lists.  Calling off changes the event and cancels (refunds) its bookings.
        return self.has_change_permission(request) and request.user.has_perm(CANCEL_BOOKINGS)


class _Refused(Exception):
    """The service refused a new event after the form had accepted it: roll back, show why."""
