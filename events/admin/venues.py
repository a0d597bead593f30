"""Staff admin for venues: their sections and seats, and the plan builders (a grid
description or a CSV upload, written by `events.services`, all or nothing)."""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, Sum
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext

from events import venues
from events.models import (
    Section,
    SectionKind,
    StageSide,
    Venue,
)
from events.plan_drawn import venue_drawing
from events.plan_grid_text import grid_description
from events.selectors import venue_plan
from kernel.errors import DomainError


class GridPlanForm(forms.Form):
    description = forms.CharField(
        label="Plan",
        widget=forms.Textarea(attrs={"rows": 12, "cols": 90, "style": "font-family: monospace"}),
        help_text=(
            "One line per section; the first section is nearest the stage. Saving replaces "
            "the whole plan (it opens with the current one). For example:"
            '<ul class="grid-help">'
            "<li><code>Section Stalls: rows 1-20 x seats 1-30; aisle after 15; "
            "accessible: row 20 seats 1-4</code></li>"
            "<li><code>Section Balcony: rows A-F x seats 1-24; restricted: row F seats "
            "1-3</code></li>"
            "<li><code>Standing Floor: capacity 800</code></li>"
            "<li><code>stage: top</code> (or bottom, left, right)</li>"
            "<li>Lines starting with <code>#</code> are comments.</li></ul>"
        ),
    )


class CsvPlanForm(forms.Form):
    file = forms.FileField(
        label="CSV file",
        help_text=(
            "Header <code>section,row,number,x,y,accessible,restricted_view</code>, one seat a "
            "line; accessible/restricted_view are yes or no. Replaces the seated sections; "
            "standing areas stay."
        ),
    )


class SectionInline(admin.TabularInline):
    """The plan as built: read-only here, changed only by the plan builders."""

    model = Section
    extra = 0
    can_delete = False
    fields = ["position", "name", "kind", "capacity", "seats", "accessible", "restricted"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_seats=Count("seats"),
                n_accessible=Count("seats", filter=Q(seats__accessible=True)),
                n_restricted=Count("seats", filter=Q(seats__restricted_view=True)),
            )
        )

    @admin.display(description="seats")
    def seats(self, obj):
        return obj.n_seats if obj.kind == SectionKind.SEATED else "—"

    @admin.display(description="accessible")
    def accessible(self, obj):
        return obj.n_accessible

    @admin.display(description="restricted view")
    def restricted(self, obj):
        return obj.n_restricted


class VenueForm(forms.ModelForm):
    class Meta:
        model = Venue
        fields = ["name", "city", "address", "time_zone", "stage_side"]

    def clean_time_zone(self):
        # The event pages show local times from it: it must be a real zone.
        try:
            venues.check_time_zone(self.cleaned_data["time_zone"])
        except DomainError as error:
            raise forms.ValidationError(error.detail) from error
        return self.cleaned_data["time_zone"]


@admin.register(Venue)
class VenueAdmin(admin.ModelAdmin):
    form = VenueForm
    list_display = ["name", "city", "time_zone", "seat_count", "standing_capacity"]
    search_fields = ["name", "city"]
    fields = ["name", "city", "address", "time_zone", "stage_side", "plan_tools", "plan"]
    readonly_fields = ["plan_tools", "plan"]
    inlines = [SectionInline]

    class Media:
        css = {"all": ["css/venue-plan.css"]}

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_seats=Count("sections__seats"),
                n_standing=Sum("sections__capacity"),
            )
        )

    @admin.display(description="seats", ordering="n_seats")
    def seat_count(self, obj):
        return obj.n_seats

    @admin.display(description="standing places")
    def standing_capacity(self, obj):
        return obj.n_standing or 0

    @admin.display(description="plan builders")
    def plan_tools(self, obj):
        if not obj.pk:
            return "Save the venue first, then build its plan."
        return format_html(
            '<a class="button" href="{}">Build from a grid description</a> '
            '<a class="button" href="{}">Import seats from CSV</a> '
            '<a class="button" href="{}">{}</a>',
            reverse("admin:events_venue_plan_grid", args=[obj.pk]),
            reverse("admin:events_venue_plan_csv", args=[obj.pk]),
            reverse("admin:events_venue_plan_draw", args=[obj.pk]),
            gettext("Draw the seat map"),
        )

    @admin.display(description="plan drawing")
    def plan(self, obj):
        if not obj.pk:
            return "—"
        drawing = venue_plan(venue=obj)
        if not drawing["sections"]:
            return "No plan yet."
        return render_to_string("events/_plan.html", {"plan": drawing})

    def get_urls(self):
        return [
            path(
                "<int:venue_id>/plan/grid/",
                self.admin_site.admin_view(self.build_from_grid),
                name="events_venue_plan_grid",
            ),
            path(
                "<int:venue_id>/plan/csv/",
                self.admin_site.admin_view(self.import_csv),
                name="events_venue_plan_csv",
            ),
            path(
                "<int:venue_id>/plan/draw/",
                self.admin_site.admin_view(self.draw_plan),
                name="events_venue_plan_draw",
            ),
            *super().get_urls(),
        ]

    def build_from_grid(self, request, venue_id: int):
        return self._plan_view(
            request,
            venue_id,
            GridPlanForm,
            "Build the plan from a grid description",
            lambda venue, data: venues.build_venue_plan_from_grid(
                venue=venue, description=data["description"]
            ),
        )

    def import_csv(self, request, venue_id: int):
        return self._plan_view(
            request,
            venue_id,
            CsvPlanForm,
            "Import seats from a CSV file",
            lambda venue, data: venues.import_venue_plan_csv(venue=venue, file=data["file"]),
        )

    def draw_plan(self, request, venue_id: int):
        """The seat-map editor (static/js/plan-editor.js): thin, `venues.save_drawn_plan`
        decides.  A refused drawing comes back as drawn, with every problem, and a 400."""
        venue = get_object_or_404(Venue, pk=venue_id)
        if not self.has_change_permission(request, venue):
            raise PermissionDenied
        problems: list[str] = []
        drawing_text = request.POST.get("drawing", "")
        opened_on = request.POST.get("plan_version", "")
        if request.method == "POST":
            try:
                plan = venues.save_drawn_plan(
                    venue=venue,
                    drawing=drawing_text,
                    expected_version=int(opened_on) if opened_on.isdigit() else None,
                )
            except DomainError as error:
                problems = list(getattr(error, "problems", None) or [error.detail])
            else:
                self.message_user(
                    request,
                    gettext("Plan of %(venue)s saved: %(sections)d section(s), %(seats)d seat(s).")
                    % {"venue": venue, "sections": len(plan.sections), "seats": plan.seat_count},
                )
                return redirect("admin:events_venue_change", venue.pk)
        try:
            drawing = json.loads(drawing_text) if problems else venue_drawing(venue=venue)
        except ValueError:
            drawing = None
        if not isinstance(drawing, dict) or not isinstance(drawing.get("sections"), list):
            drawing = venue_drawing(venue=venue)
        context = {
            **self.admin_site.each_context(request),
            "title": gettext("Draw the seat map"),
            "venue": venue,
            "opts": self.model._meta,
            "problems": problems,
            "drawing": drawing,
            "in_use": venue.events.exists(),
            # Kept as opened across a refusal: a plan saved meanwhile is not saved over.
            "plan_version": opened_on if problems and opened_on else venue.plan_version,
            "stage_sides": StageSide.choices,
        }
        return render(
            request,
            "admin/events/venue/plan_editor.html",
            context,
            status=400 if problems else 200,
        )

    def _plan_view(self, request, venue_id, form_class, title, build):
        venue = get_object_or_404(Venue, pk=venue_id)
        if not self.has_change_permission(request, venue):
            raise PermissionDenied
        initial = (
            {"description": grid_description(venue=venue)} if form_class is GridPlanForm else {}
        )
        form = form_class(request.POST or None, request.FILES or None, initial=initial)
        if request.method == "POST" and form.is_valid():
            try:
                plan = build(venue, form.cleaned_data)
            except DomainError as error:
                for problem in getattr(error, "problems", None) or [error.detail]:
                    form.add_error(None, problem)
            else:
                self.message_user(
                    request,
                    f"Plan of {venue} saved: {len(plan.sections)} section(s), "
                    f"{plan.seat_count} seat(s).",
                )
                return redirect("admin:events_venue_change", venue.pk)
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "venue": venue,
            "form": form,
            "opts": self.model._meta,
        }
        return render(request, "admin/events/venue/plan_form.html", context)
