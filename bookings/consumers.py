"""A websocket per live seat map, for any catalogue's sale (a flight's, an event's).  Watching
needs no login; it only ever receives.  The route names the catalogue item (`ref`: a flight
id, an event id) and the consumer's `kind` says which catalogue resolves it to its sale."""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from bookings import catalogue
from bookings.live import seat_map_group


@database_sync_to_async
def _sale_of(kind: str, ref: int) -> int | None:
    return catalogue.sale_id_for(kind, ref)


class SeatMapConsumer(AsyncJsonWebsocketConsumer):
    group: str | None = None

    def __init__(self, *args, kind: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.kind = kind  # the SaleKind of the route: as_asgi(kind=...)

    async def connect(self) -> None:
        ref = int(self.scope["url_route"]["kwargs"]["ref"])
        sale_id = await _sale_of(self.kind, ref)
        if sale_id is None:
            await self.close()  # before accept: the handshake is refused with 403
            return
        self.group = seat_map_group(sale_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content, **kwargs) -> None:
        """Clients have nothing to say; snapshots come over HTTP."""

    async def seats_changed(self, event: dict) -> None:
        await self.send_json(
            {"type": "seats", "version": event["version"], "seats": event["seats"]}
        )

    async def plan_changed(self, event: dict) -> None:
        """The plan itself changed (`bookings.live.announce_plan_on_commit`): the page redraws
        from the server, as statuses cannot show a seat it has never drawn."""
        await self.send_json({"type": "plan", "version": event["version"], "seats": {}})
