"""REST endpoints of bookings owned by the workers: the gate's scan."""

from __future__ import annotations

from rest_framework import exceptions, serializers
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings.tickets import ScanResult, scan_ticket
from config.problems import problem_response
from flights.models import Flight


class CheckinScanApi(APIView):
    """POST {"code", "flightId"} -> the verdict for the gate.

    Every verdict (valid, forged, revoked, already_used, wrong_flight) is a 200: the scan was
    answered.  Malformed requests and unknown flights are problem+json 4xx.
    """

    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAdminUser]

    class InputSerializer(serializers.Serializer):
        code = serializers.CharField(max_length=1000)
        flightId = serializers.IntegerField(min_value=1)

    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        if not data.is_valid():
            return problem_response(
                status=400, title="Invalid request", code="invalid-request",
                detail="Send the scanned code and the flight being boarded.", errors=data.errors,
            )
        flight_id = data.validated_data["flightId"]
        if not Flight.objects.filter(pk=flight_id).exists():
            return problem_response(
                status=404, title="Flight not found", code="flight-not-found",
                detail=f"There is no flight {flight_id}.",
            )
        result = scan_ticket(
            code=data.validated_data["code"], flight_id=flight_id, scanned_by=request.user
        )
        return Response(scan_result_body(result))

    def handle_exception(self, exc: Exception):
        if isinstance(exc, exceptions.APIException):
            status = exc.status_code
            if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
                status = 401
            response = problem_response(
                status=status, title=str(exc.default_detail), detail=str(exc.detail),
                code={401: "not-authenticated", 403: "forbidden"}.get(status),
            )
            if status == 401:
                response["WWW-Authenticate"] = self.get_authenticate_header(self.request) or "Token"
            return response
        return super().handle_exception(exc)


def scan_result_body(result: ScanResult) -> dict:
    ticket = result.ticket
    return {
        "result": result.outcome.value,
        "message": result.message,
        "ticket": None if ticket is None else {
            "serial": ticket.serial,
            "bookingId": ticket.booking_id,
            "flightId": ticket.flight_id,
            "passengerName": ticket.passenger_name,
            "seat": ticket.seat_no or None,
            "fareClass": ticket.fare_class,
            "status": ticket.status,
            "usedAt": ticket.used_at.isoformat() if ticket.used_at else None,
        },
    }
