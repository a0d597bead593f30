"""The waiting room over REST: a room's public facts, your place (the polling endpoint that
also hands out the admission token) and joining.  Thin.  (The one-click waitlist join for
those told a seat is unlikely is a waitlist door: storefront/waitlist_api.py.)"""

from __future__ import annotations

from urllib.parse import urlencode

from drf_spectacular.utils import extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from bookings import catalogue
from bookings.models import SaleKind
from kernel.web.client_ip import client_ip
from kernel.web.openapi import problems
from waitroom import joining, proof_of_work, room_selectors, socket_tickets
from waitroom.errors import RoomNotFound
from waitroom.models import Lane, StockState, WaitingRoom

# The path's id is the waiting room's own (`room_id`), not the engine sale's: a flight's or
# an event's sale is reached through the room (`sale`), whose catalogue names the item.
ROOM_ID_NOTE = (
    "`roomId` is the waiting room's own id, as `waitingRoom.roomId` on the flight or event "
    "names it; not the id of the flight (`flightId`) or event (`eventId`) behind it. "
    "`saleId` in these answers is the same room id, kept for older clients."
)
ID_VOCABULARY = (
    "Ids: `flightId` names a flight (`GET /api/flights/{flightId}`), `eventId` an event "
    "(`GET /api/events/{eventId}`), `roomId` a waiting room. `saleId` in waiting-room "
    "answers is the room's id too (its old name), never a flight's or an event's."
)


def room_or_404(room_id: int) -> WaitingRoom:
    room = WaitingRoom.objects.select_related("sale").filter(pk=room_id).first()
    if room is None:
        raise RoomNotFound(f"There is no waiting room {room_id}.")
    return room


class ItemOfRoomField(serializers.IntegerField):
    """The flight or event a room guards (by `kind`), named through the catalogue registry;
    null for a room of another kind."""

    def __init__(self, *, kind: str, **kwargs):
        self.kind = kind
        super().__init__(source="*", allow_null=True, **kwargs)

    def to_representation(self, room: WaitingRoom) -> int | None:
        owner = catalogue.owner_item(room.sale)
        return owner[1].pk if owner and room.sale.kind == self.kind else None


class WaitingRoomSummarySerializer(serializers.Serializer):
    """`waitroom.room_selectors.room_summary`: the room on a flight's or an event's answer."""

    room_id = serializers.IntegerField(help_text="The waiting room's id (`roomId` in its URLs).")
    state = serializers.ChoiceField(
        choices=["PREQUEUE", "OPEN", "PAUSED"],
        help_text=(
            "PREQUEUE before `opensAt` (joining takes a place in the pre-queue, shuffled at "
            "`opensAt`), OPEN while admitting, PAUSED while staff hold admission. As of when "
            "the answer was built (searches are cached for a few seconds)."
        ),
    )
    opens_at = serializers.DateTimeField(help_text="UTC: the on-sale time.")
    room_url = serializers.CharField(help_text="`GET`: the room's public facts.")
    queue_url = serializers.CharField(
        help_text="`POST` to join, `GET` to poll your place (and your admission token)."
    )
    websocket_url = serializers.CharField(
        help_text="Your place, live. Token clients add `?ticket=` from `POST {queueUrl}/ticket`."
    )
    page_url = serializers.CharField(help_text="The queue page for people in a browser.")


class WaitingRoomSerializer(serializers.Serializer):
    room_id = serializers.IntegerField(source="pk", help_text="The waiting room's id.")
    sale_id = serializers.IntegerField(
        source="pk",
        help_text="The same as `roomId` (its old name, kept for older clients); not a flight's "
        "or an event's id.",
    )
    kind = serializers.CharField(help_text="What the room's sale sells: FLIGHT or EVENT.")
    flight_id = ItemOfRoomField(kind=SaleKind.FLIGHT, help_text="The flight; null for an event.")
    event_id = ItemOfRoomField(kind=SaleKind.EVENT, help_text="The event; null for a flight.")
    state = serializers.SerializerMethodField()
    opens_at = serializers.DateTimeField()
    admit_per_minute = serializers.IntegerField()
    paused = serializers.BooleanField()
    safety_net = serializers.BooleanField(
        help_text="Safety-net mode: dormant (no queue, holds pass) until a rush switches it on."
    )
    safety_net_on = serializers.SerializerMethodField(
        help_text="A safety-net room switched on by a rush: new shoppers queue."
    )
    require_proof_of_work = serializers.BooleanField(
        help_text="Joining needs a proof-of-work (`POST .../challenge`)."
    )
    seed_commitment = serializers.CharField(
        help_text="SHA-256 of the shuffle seed, published before the on-sale time."
    )
    seed = serializers.CharField(
        source="seed_published",
        allow_null=True,
        help_text="The shuffle seed, published once the pre-queue was shuffled.",
    )
    shuffled_at = serializers.DateTimeField(allow_null=True)
    shuffled_count = serializers.IntegerField()
    shuffle_algorithm = serializers.SerializerMethodField()

    @extend_schema_field(serializers.ChoiceField(choices=["PREQUEUE", "OPEN", "PAUSED"]))
    def get_state(self, room) -> str:
        return room_selectors.room_state(room=room)

    def get_safety_net_on(self, room) -> bool:
        return room.safety_net and room.safety_net_on_since is not None

    def get_shuffle_algorithm(self, room) -> str:
        return room_selectors.SHUFFLE_ALGORITHM


QueueStatusSerializer = inline_serializer(
    "QueueStatus",
    {
        "room_id": serializers.IntegerField(help_text="The waiting room's id."),
        "sale_id": serializers.IntegerField(
            help_text="The same as `roomId` (its old name); not a flight's or event's id."
        ),
        "opens_at": serializers.DateTimeField(help_text="UTC: the on-sale time."),
        "entry_id": serializers.IntegerField(
            required=False,
            help_text="Once joined: your place's id (the websocket's messages name it).",
        ),
        "order_key": serializers.IntegerField(
            required=False,
            allow_null=True,
            help_text="Once joined: your place in the queue's order (lower goes first); null "
            "in the pre-queue until the shuffle at `opensAt` gives one.",
        ),
        "enter_url": serializers.CharField(
            required=False,
            help_text="ADMITTED: the page that lets a browser in (sets the admission cookie); "
            "API clients send `token` instead.",
        ),
        "status": serializers.ChoiceField(
            choices=["NOT_JOINED", "PREQUEUE", "WAITING", "ADMITTED", "EXPIRED"],
            help_text="The websocket may also send UNAVAILABLE while the queue store is down.",
        ),
        "position": serializers.IntegerField(required=False, help_text="1-based, WAITING."),
        "ahead": serializers.IntegerField(required=False),
        "eta_seconds": serializers.IntegerField(required=False, allow_null=True),
        "unlikely": serializers.BooleanField(
            required=False,
            help_text="Beyond the inventory horizon: a seat is unlikely; the waitlist is open.",
        ),
        "paused": serializers.BooleanField(required=False),
        "prequeue": serializers.IntegerField(required=False, help_text="PREQUEUE: how many."),
        "token": serializers.CharField(
            required=False,
            help_text="ADMITTED: send it as `X-Waiting-Room-Token` with `POST /api/bookings`.",
        ),
        "expires_at": serializers.DateTimeField(required=False),
        "seed_commitment": serializers.CharField(),
        "seed": serializers.CharField(allow_null=True),
        "version": serializers.IntegerField(required=False),
        "units_left": serializers.IntegerField(
            required=False,
            help_text="Units free to hold, as PostgreSQL counted them at the last admission "
            "tick or the sell-out (not the Redis counter in front of the hold, which may drift).",
        ),
        "units_held": serializers.IntegerField(
            required=False, help_text="Units held by shoppers now: they come back if holds lapse."
        ),
        "stock": serializers.ChoiceField(
            choices=StockState.values,
            required=False,
            help_text="AVAILABLE: units left; ALL_HELD: none left, but holds may lapse; "
            "SOLD_OUT: all sold.",
        ),
        "sold_out": serializers.BooleanField(
            required=False, help_text="Every unit sold: the waitlist is open to you."
        ),
        "stock_at": serializers.FloatField(
            required=False, help_text="When the stock was read (Unix seconds)."
        ),
        "lane": serializers.ChoiceField(
            choices=Lane.values,
            required=False,
            help_text="PRIORITY: a presale code's lane, admitted first or at its share.",
        ),
        "queue_closed": serializers.BooleanField(
            help_text="Sold out: the queue takes no new joins (places taken are kept)."
        ),
    },
)


class JoinInput(serializers.Serializer):
    proof_challenge = serializers.CharField(
        required=False,
        max_length=200,
        help_text="Rooms with `requireProofOfWork`: the challenge from `POST .../challenge`.",
    )
    proof_solution = serializers.CharField(
        required=False, max_length=12, help_text="Its solution (decimal digits)."
    )
    presale_code = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=32,
        help_text="A presale code staff issued for this room: queue in the priority lane. "
        "It binds to your account (400 `presale-code-invalid`, 409 `presale-code-used-up`).",
    )


ChallengeSerializer = inline_serializer(
    "ProofOfWorkChallenge",
    {
        "challenge": serializers.CharField(
            help_text="Find a decimal `solution` such that scrypt(password = challenge, salt = "
            "solution, N, r, p, dkLen) starts with `difficulty` zero bits; join with both."
        ),
        "difficulty": serializers.IntegerField(help_text="Leading zero bits: ~2^difficulty tries."),
        "expires_at": serializers.DateTimeField(),
        "scrypt": inline_serializer(
            "ScryptParameters",
            {
                "n": serializers.IntegerField(),
                "r": serializers.IntegerField(),
                "p": serializers.IntegerField(),
                "dk_len": serializers.IntegerField(),
            },
        ),
    },
)


class ChallengeApi(APIView):
    @extend_schema(
        operation_id="waiting_room_challenge",
        request=None,
        description=(
            "A proof-of-work challenge for joining a room that requires one (`requireProofOf"
            "Work`): bound to your account and this room, single-use, expiring. Harder for "
            "addresses whose /24 (IPv6 /64) already holds places here and for new or "
            "unverified accounts. " + ROOM_ID_NOTE
        ),
        responses={200: ChallengeSerializer, **problems(401, 404, 503)},
        tags=["waiting room"],
    )
    def post(self, request, room_id: int):
        challenge = proof_of_work.issue_challenge(
            room=room_or_404(room_id), customer=request.user, address=client_ip(request) or None
        )
        return Response(challenge.wire())


class RoomApi(APIView):
    @extend_schema(
        operation_id="waiting_room_retrieve",
        description=ROOM_ID_NOTE + " " + ID_VOCABULARY,
        responses={200: WaitingRoomSerializer, **problems(401, 404)},
        tags=["waiting room"],
    )
    def get(self, request, room_id: int):
        return Response(WaitingRoomSerializer(room_or_404(room_id)).data)


def _proof(data: dict) -> tuple[str, str] | None:
    if not data.get("proof_challenge"):
        return None
    return data["proof_challenge"], data.get("proof_solution", "")


class QueueApi(APIView):
    @extend_schema(
        operation_id="waiting_room_queue_status",
        description=(
            "Your place: poll it (every few seconds) when you cannot use the websocket "
            "`/ws/waiting-room/{roomId}/` (token clients: `POST …/queue/ticket` first). "
            "Once ADMITTED it carries your admission token. " + ROOM_ID_NOTE
        ),
        responses={200: QueueStatusSerializer, **problems(401, 404, 503)},
        tags=["waiting room"],
    )
    def get(self, request, room_id: int):
        room = room_or_404(room_id)
        return Response(room_selectors.queue_status(room=room, customer_id=request.user.pk))

    @extend_schema(
        operation_id="waiting_room_queue_join",
        request=JoinInput,
        description=(
            "Take a place (before the on-sale time: the pre-queue, shuffled at the on-sale "
            "time). Joining again keeps your place. Limited per account and per address "
            "(429 `too-many-joins` with Retry-After); 503 while the queue store is down. "
            "A room that lets in only verified e-mail addresses answers 403 "
            "`email-not-verified` (with `sendLinkUrl`) to an account whose address is not. "
            "A sold-out room answers 409 `queue-sold-out` to anyone not already waiting in it. "
            "With `presaleCode` you queue in the priority lane: an unknown code is 400 "
            "`presale-code-invalid`, one used by other accounts 409 `presale-code-used-up`. "
            "A room with `requireProofOfWork` needs `proofChallenge` and `proofSolution` for a "
            "new place: 403 `proof-of-work-required` without, 400 `proof-of-work-invalid` "
            "if it does not pass (forged, another account's, expired, wrong or used). "
            + ROOM_ID_NOTE
        ),
        responses={200: QueueStatusSerializer, **problems(400, 401, 403, 404, 409, 429, 503)},
        tags=["waiting room"],
    )
    def post(self, request, room_id: int):
        # A body that is not an object (a JSON string, a list) is a 400, as the schema says,
        # not a join with no options.
        body = JoinInput(data=request.data)
        body.is_valid(raise_exception=True)
        # The join limit per address counts customers, not our proxy (kernel/web/client_ip.py).
        joining.join_queue(
            room_id=room_id,
            customer=request.user,
            address=client_ip(request) or None,
            presale_code=body.validated_data.get("presale_code") or None,
            proof=_proof(body.validated_data),
        )
        waiting_room = room_or_404(room_id)
        return Response(room_selectors.queue_status(room=waiting_room, customer_id=request.user.pk))


class SocketTicketSerializer(serializers.Serializer):
    ticket = serializers.CharField(help_text="Pass on connect as `?ticket=`.")
    expires_at = serializers.DateTimeField(
        help_text=f"Connect before this (UTC): a ticket lives {socket_tickets.TICKET_SECONDS} s."
    )
    websocket_url = serializers.CharField(
        help_text="The queue websocket's path with the ticket: open it on the same host."
    )

    class Meta:
        ref_name = "QueueSocketTicket"


class QueueSocketTicketApi(APIView):
    @extend_schema(
        operation_id="waiting_room_queue_socket_ticket",
        request=None,
        description=(
            "A short-lived ticket that opens the queue websocket `/ws/waiting-room/{roomId}/` "
            "without a browser session, for clients that authenticate with a token: connect "
            "to `websocketUrl` (`?ticket=…`) within "
            f"{socket_tickets.TICKET_SECONDS} seconds. The socket then sends your place "
            "(the body of `GET …/queue`) and every change of it, until you are ADMITTED (with "
            "`token`). The ticket names this room and your account only; ask a new one for "
            "every connection. Without a ticket the socket wants the site's session cookie and "
            "an Origin of this site, as browsers send. " + ROOM_ID_NOTE
        ),
        responses={201: SocketTicketSerializer, **problems(401, 404)},
        tags=["waiting room"],
    )
    def post(self, request, room_id: int):
        room = room_or_404(room_id)
        ticket, expires_at = socket_tickets.issue_ticket(
            room_id=room.pk, customer_id=request.user.pk
        )
        body = {
            "ticket": ticket,
            "expires_at": expires_at,
            "websocket_url": f"/ws/waiting-room/{room.pk}/?{urlencode({'ticket': ticket})}",
        }
        return Response(SocketTicketSerializer(body).data, status=201)
