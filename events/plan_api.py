"""The seat-map editor over REST (staff who may change venues): read a venue's seated plan in
the editor's drawn form, save an edited one.  Thin: the rules are the admin editor's
(`events.venues.save_drawn_plan`, `events.plan_editing`, the seats checked by
`events.plan_parsing`), written once.

Saves are conditional: GET answers with the plan's version as its ETag, and a PUT must send
it back as `If-Match`; a plan saved meanwhile answers 412 (`venue-plan-changed`) and nothing
is written.  The serializers check only the body's shape (types, strings without NUL); what
a seat may be, and what a plan on sale may lose, is the services' to say."""

from __future__ import annotations

import re

from django.utils.http import parse_etags
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from events import venues
from events.errors import PlanVersionRequired, VenueNotFound, VenuePlanChanged
from events.models import StageSide, Venue
from events.plan_drawn import venue_drawing
from kernel.web.openapi import problems

_ETAG = re.compile(r'^"venue-(\d+)-plan-(\d+)"$')


class EditsVenuePlans(BasePermission):
    """Staff with the admin's own venue permissions: `events.view_venue` (or change) to read
    a plan, `events.change_venue` to save one (the admin editor's `has_change_permission`)."""

    message = "The seat-map editor is for staff who may change venues."

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated and user.is_staff):
            return False
        if request.method in SAFE_METHODS and user.has_perm("events.view_venue"):
            return True
        return user.has_perm("events.change_venue")


class DrawnSeatSerializer(serializers.Serializer):
    row = serializers.CharField(max_length=8, help_text="Row label, 1 to 8 letters or digits.")
    number = serializers.IntegerField(help_text="Seat number in its row.")
    x = serializers.IntegerField(help_text="Column in the section's grid, from 1.")
    y = serializers.IntegerField(help_text="Line in the section's grid, from 1.")
    accessible = serializers.BooleanField(default=False)
    restricted_view = serializers.BooleanField(default=False)
    quality = serializers.FloatField(
        allow_null=True,
        required=False,
        help_text="Best-available score, lower is better; null: the distance from the stage "
        "centre.",
    )


class DrawnSectionSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=60, help_text="Sections are matched by name.")
    seats = DrawnSeatSerializer(many=True)


class PlanDrawingInputSerializer(serializers.Serializer):
    stage_side = serializers.ChoiceField(
        choices=StageSide.choices,
        required=False,
        allow_null=True,
        help_text="Left out or null: the stage stays where it is.",
    )
    sections = DrawnSectionSerializer(
        many=True,
        help_text="The seated sections, in order; a section left out is removed (if no "
        "category prices it). Standing areas are not drawn and stay as they are.",
    )


class PlanDrawingSerializer(serializers.Serializer):
    venue_id = serializers.IntegerField()
    plan_version = serializers.IntegerField(
        help_text="Counts the plan's saves; also the `ETag` to send back as `If-Match`."
    )
    stage_side = serializers.ChoiceField(choices=StageSide.choices)
    sections = DrawnSectionSerializer(many=True)


def plan_etag(venue: Venue) -> str:
    return f'"venue-{venue.pk}-plan-{venue.plan_version}"'


def _drawing_response(venue: Venue) -> Response:
    body = {"venue_id": venue.pk, "plan_version": venue.plan_version, **venue_drawing(venue=venue)}
    return Response(PlanDrawingSerializer(body).data, headers={"ETag": plan_etag(venue)})


def _expected_version(venue: Venue, if_match: str | None) -> int | None:
    """The version `If-Match` names (None for `*`: any plan); RFC 9110's strong comparison,
    so a weak tag matches nothing."""
    if not if_match:
        raise PlanVersionRequired(
            gettext(
                "Send the ETag the plan was read with as If-Match (GET the plan first), or "
                '"*" to save over whatever plan there is now.'
            )
        )
    tags = parse_etags(if_match)
    if tags == ["*"]:
        return None
    if len(tags) != 1:
        raise ValidationError({"": [gettext("If-Match names one plan version (one ETag).")]})
    found = _ETAG.match(tags[0])
    if found is None or int(found[1]) != venue.pk:
        raise VenuePlanChanged(
            gettext("If-Match names no version of this venue's plan: GET it again."),
            planVersion=venue.plan_version,
        )
    return int(found[2])


class VenuePlanApi(APIView):
    permission_classes = [EditsVenuePlans]

    def _venue(self, venue_id: int) -> Venue:
        venue = Venue.objects.filter(pk=venue_id).first()
        if venue is None:
            raise VenueNotFound(gettext("There is no venue %(id)s.") % {"id": venue_id})
        return venue

    @extend_schema(
        operation_id="venues_plan_retrieve",
        tags=["venues"],
        summary="A venue's seated plan, as the seat-map editor draws it (staff)",
        description=(
            "Every seated section with its seats: row, number, place on the section's grid "
            "(x, y: aisles are columns left out, curves and angles are where the seats sit), "
            "accessible, restricted view and quality score. Standing areas are not drawn. "
            "The `ETag` names the plan's version: send it back as `If-Match` to save. For "
            "staff with `events.view_venue` or `events.change_venue`."
        ),
        responses={200: PlanDrawingSerializer, **problems(401, 403, 404)},
    )
    def get(self, request, venue_id: int):
        return _drawing_response(self._venue(venue_id))

    @extend_schema(
        operation_id="venues_plan_update",
        tags=["venues"],
        summary="Save a venue's edited seated plan (staff)",
        description=(
            "The admin's seat-map editor's save, all or nothing: the seats are checked by the "
            "CSV import's rules (every problem in `problems`, 400 `invalid-venue-plan`). A "
            'venue with events is changed in place (docs/events.md, "The seat-map editor"): '
            "seats may be added (where a category of each event on sale prices them), moved, "
            "flagged and scored; a section a category prices is never removed; a seat held or "
            "sold for an event on sale is never removed or renumbered (409 "
            "`venue-plan-seats-in-use`, `seats` names them). Each event's live seat map "
            "follows on commit. `If-Match` is required (428 without it): the `ETag` the plan "
            "was read with, or `*`; a plan saved since answers 412 `venue-plan-changed` "
            "(`planVersion` is the current one). Answers the plan as saved, with its new "
            "`ETag`. For staff with `events.change_venue`."
        ),
        parameters=[
            OpenApiParameter(
                "If-Match",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                required=True,
                description='The plan\'s ETag from GET (e.g. `"venue-3-plan-7"`), or `*`.',
            )
        ],
        request=PlanDrawingInputSerializer,
        responses={
            200: PlanDrawingSerializer,
            **problems(
                400,
                401,
                403,
                404,
                409,
                412,
                428,
                s409="A held or sold seat of an event on sale would leave the plan (`seats` "
                "names them, `problems` says which event); nothing was saved.",
            ),
        },
    )
    def put(self, request, venue_id: int):
        venue = self._venue(venue_id)
        body = PlanDrawingInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        expected = _expected_version(venue, request.headers.get("If-Match"))
        venues.save_drawn_plan(
            venue=venue, drawing=_drawing(body.validated_data), expected_version=expected
        )
        return _drawing_response(venue)


def _drawing(data: dict) -> dict:
    """The validated body as the editor's drawing (events.plan_drawn's format)."""
    return {
        "stage_side": data.get("stage_side"),
        "sections": [
            {"name": s["name"], "seats": [dict(seat) for seat in s["seats"]]}
            for s in data["sections"]
        ],
    }
