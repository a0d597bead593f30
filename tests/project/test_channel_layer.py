"""The channel layer's reads outlast its own blocking pop (config/settings/caches_and_channels.py,
CHANNEL_LAYERS).

A web process reads its sockets' messages with BZPOPMIN, held open by Redis for up to
`brpop_timeout` seconds when nothing comes.  With a socket read timeout shorter than that
(redis-py 8's default equals it), an idle process's read raised TimeoutError and closed the
websocket that happened to be reading.  Each test waits one blocking pop (~5 s).
"""

from __future__ import annotations

import asyncio
import copy

import pytest
from channels.layers import channel_layers
from redis.exceptions import TimeoutError as RedisTimeout


def _layer(settings, **host_options):
    config = copy.deepcopy(settings.CHANNEL_LAYERS["default"])
    for host in config["CONFIG"]["hosts"]:
        host.update(host_options)
    settings.CHANNEL_LAYERS = {"default": config}
    return channel_layers.make_backend("default")


def _receive_after_an_idle_pop(layer) -> dict:
    """A message sent one second after a whole blocking pop came back empty."""

    async def scenario():
        channel = await layer.new_channel()

        async def send_late():
            await asyncio.sleep(layer.brpop_timeout + 1)
            await layer.send(channel, {"type": "late.news"})

        sender = asyncio.create_task(send_late())
        try:
            return await asyncio.wait_for(layer.receive(channel), layer.brpop_timeout + 5)
        finally:
            sender.cancel()
            await layer.close_pools()

    return asyncio.run(scenario())


def test_the_configured_layer_survives_an_idle_blocking_pop(settings):
    layer = _layer(settings)
    hosts = settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"]
    assert all(host["socket_timeout"] > layer.brpop_timeout for host in hosts)

    assert _receive_after_an_idle_pop(layer) == {"type": "late.news"}


def test_control_a_read_timeout_shorter_than_the_pop_kills_the_reader(settings):
    # What the setting prevents, shown to happen: the same scenario fails.
    layer = _layer(settings, socket_timeout=3.0)
    assert layer.brpop_timeout > 3.0

    with pytest.raises(RedisTimeout):
        _receive_after_an_idle_pop(layer)
