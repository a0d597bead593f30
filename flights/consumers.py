"""A websocket per flight seat map.  Watching needs no login; it only ever receives."""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from flights.live import seat_map_group
from flights.models import Flight


@database_sync_to_async
def _flight_exists(flight_id: int) -> bool:
    return Flight.objects.filter(pk=flight_id).exists()


class SeatMapConsumer(AsyncJsonWebsocketConsumer):
    group: str | None = None

    async def connect(self) -> None:
        flight_id = int(self.scope["url_route"]["kwargs"]["flight_id"])
        if not await _flight_exists(flight_id):
            await self.close()  # before accept: the handshake is refused with 403
            return
        self.group = seat_map_group(flight_id)
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
