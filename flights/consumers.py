"""A websocket per flight seat map.  Watching needs no login; it only ever receives."""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from bookings.live import seat_map_group
from flights.models import Flight


@database_sync_to_async
def _sale_of_flight(flight_id: int) -> int | None:
    return Flight.objects.filter(pk=flight_id).values_list("sale_id", flat=True).first()


class SeatMapConsumer(AsyncJsonWebsocketConsumer):
    group: str | None = None

    async def connect(self) -> None:
        flight_id = int(self.scope["url_route"]["kwargs"]["flight_id"])
        sale_id = await _sale_of_flight(flight_id)
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
