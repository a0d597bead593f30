"""Tickets over REST: a booking's tickets, and each one's QR code (PNG, SVG) and PDF.

Only the booking's owner and those who act for customers see them; for anyone else the
booking does not exist (404).  Rendering is `bookings.ticket_render`, shared with the pages.
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings import catalogue, selectors
from bookings.models import Ticket, TicketStatus
from kernel.web.openapi import problems
from storefront.ticket_views import ticket_file

FILES = {
    # kind -> (URL name, media type, what it is)
    "png": ("ticket-qr-png", "image/png", "The QR code as PNG."),
    "svg": ("ticket-qr-svg", "image/svg+xml", "The QR code as SVG."),
    "pdf": ("ticket-pdf", "application/pdf", "The e-ticket / boarding pass as PDF (attachment)."),
}


class TicketLinksSerializer(serializers.Serializer):
    qr_png = serializers.CharField()
    qr_svg = serializers.CharField()
    pdf = serializers.CharField()


class TicketSerializer(serializers.Serializer):
    ticket_id = serializers.IntegerField(source="pk")
    serial = serializers.CharField()
    passenger = serializers.CharField(source="passenger_name", allow_blank=True)
    seat = serializers.CharField(
        source="seat_no", allow_null=True, help_text="null: assigned at the gate."
    )
    fare_class = serializers.CharField(
        help_text="The fare class (flights), price category or standing area (events)."
    )
    place = serializers.SerializerMethodField(
        help_text='Where the holder goes, as printed: "seat 12A", "Stalls, row F, seat 7", '
        '"Standing — Floor".'
    )
    fare = serializers.SerializerMethodField(
        help_text='What was bought, as printed: "Economy", "A — Front stalls".'
    )
    status = serializers.ChoiceField(choices=TicketStatus.choices)
    code = serializers.CharField(help_text="The signed content of the QR code.")
    issued_at = serializers.DateTimeField()
    links = serializers.SerializerMethodField(help_text="Absolute paths of the downloads.")

    def get_place(self, ticket: Ticket) -> str:
        return self._face(ticket).place

    def get_fare(self, ticket: Ticket) -> str:
        return self._face(ticket).fare

    def _face(self, ticket: Ticket) -> catalogue.TicketFace:
        # The catalogue's words for the ticket (the same as on its PDF), built once per ticket.
        face = getattr(ticket, "_face", None)
        if face is None:
            face = ticket._face = catalogue.ticket_face(ticket)
        return face

    @extend_schema_field(TicketLinksSerializer)
    def get_links(self, ticket: Ticket) -> dict[str, str]:
        args = [ticket.booking_id, ticket.pk]
        return {
            "qr_png": reverse(f"bookings_api:{FILES['png'][0]}", args=args),
            "qr_svg": reverse(f"bookings_api:{FILES['svg'][0]}", args=args),
            "pdf": reverse(f"bookings_api:{FILES['pdf'][0]}", args=args),
        }

    def to_representation(self, ticket: Ticket):
        data = super().to_representation(ticket)
        data["seat"] = data["seat"] or None
        return data


class TicketListApi(APIView):
    @extend_schema(
        operation_id="bookings_tickets",
        tags=["tickets"],
        summary="The tickets of a booking",
        description=(
            "One per passenger, issued once the booking is CONFIRMED (valid, used or revoked); "
            "an empty list before that."
        ),
        responses={200: TicketSerializer(many=True), **problems(401, 404)},
    )
    def get(self, request, booking_id: int):
        tickets = selectors.tickets_for_booking(booking_id=booking_id, user=request.user)
        return Response(TicketSerializer(tickets, many=True).data)


class TicketFileApi(APIView):
    """Base of the three downloads; each subclass fixes `kind` and documents its media type."""

    kind = ""

    def perform_content_negotiation(self, request, force=False):
        # The body is an image or a PDF, not a rendered document: an `Accept: image/png` must
        # not end in 406.  Errors still leave as problem+json through the first renderer.
        return super().perform_content_negotiation(request, force=True)

    def download(self, request, booking_id: int, ticket_id: int):
        ticket = selectors.access_ticket(
            user=request.user, booking_id=booking_id, ticket_id=ticket_id
        )
        return ticket_file(ticket, self.kind)


def file_schema(kind: str):
    _, media_type, description = FILES[kind]
    return extend_schema(
        operation_id=f"bookings_ticket_{kind}",
        tags=["tickets"],
        summary=description,
        responses={
            (200, media_type): OpenApiResponse(OpenApiTypes.BINARY, description=description),
            **problems(401, 404, s404="No such ticket on a booking of yours."),
        },
    )


class TicketPngApi(TicketFileApi):
    kind = "png"

    @file_schema("png")
    def get(self, request, booking_id: int, ticket_id: int):
        return self.download(request, booking_id, ticket_id)


class TicketSvgApi(TicketFileApi):
    kind = "svg"

    @file_schema("svg")
    def get(self, request, booking_id: int, ticket_id: int):
        return self.download(request, booking_id, ticket_id)


class TicketPdfApi(TicketFileApi):
    kind = "pdf"

    @file_schema("pdf")
    def get(self, request, booking_id: int, ticket_id: int):
        return self.download(request, booking_id, ticket_id)
