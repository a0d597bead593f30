"""Listening to a flight's seat-map group through the real channel layer (Redis in tests)."""

from __future__ import annotations

import asyncio

from channels.layers import channel_layers

from bookings.live import seat_map_group


class SeatMapListener:
    """A channel subscribed to one flight's seat-map group, read synchronously.

    It owns its layer instance and event loop: channels_redis binds a channel's receive
    buffer to the loop that first used it.
    """

    def __init__(self, flight_id: int) -> None:
        self.loop = asyncio.new_event_loop()
        self.layer = channel_layers.make_backend("default")
        self.group = seat_map_group(flight_id)
        self.channel = self._run(self.layer.new_channel())
        self._run(self.layer.group_add(self.group, self.channel))

    def _run(self, coroutine):
        return self.loop.run_until_complete(coroutine)

    def next(self, timeout: float = 2.0) -> dict | None:
        async def receive():
            try:
                return await asyncio.wait_for(self.layer.receive(self.channel), timeout)
            except TimeoutError:
                return None

        return self._run(receive())

    def close(self) -> None:
        self._run(self.layer.group_discard(self.group, self.channel))
        self._run(self.layer.close_pools())
        self.loop.close()
