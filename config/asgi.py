"""ASGI entry point: HTTP, and seat-map and waiting-room websockets, from one server process.

Run it with a real server, e.g. `uvicorn config.asgi:application --workers 2`.

How HTTP is served (measured in docs/performance.md):
* `SEATKEEPER_HTTP=wsgi` (the default): Django's plain WSGI handler on a fixed pool of
  `WEB_THREADS` threads inside the ASGI server (a2wsgi).  Every view is sync, so this is
  the cheapest path: no per-request thread, no sync/async adapters, and because the threads
  live as long as the process, each keeps one persistent connection (CONN_MAX_AGE): one
  process never holds more than WEB_THREADS connections.
* `SEATKEEPER_HTTP=asgi`: Django's ASGI handler.  It runs each request's sync code in a
  thread of its own, where persistent connections would pile up; connections then come
  from a per-process psycopg pool of at most DB_POOL_MAX_SIZE.
Websockets always go through Channels.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# The event loop thread (HTTP parsing, responses) waits for the GIL as the HTTP threads do:
# a short switch interval (config/warmup.py) before anything else runs.
from config.warmup import shorten_gil_switch

shorten_gil_switch()
HTTP_MODE = os.environ.get("SEATKEEPER_HTTP", "wsgi")
if HTTP_MODE == "asgi":
    os.environ.setdefault("DB_POOL", "1")
else:
    os.environ.setdefault("DB_CONN_MAX_AGE", "60")

# Set up Django (apps, settings) before anything imports models.
if HTTP_MODE == "asgi":
    from django.core.asgi import get_asgi_application

    http_application = get_asgi_application()
else:
    from a2wsgi import WSGIMiddleware
    from django.core.wsgi import get_wsgi_application

    http_application = WSGIMiddleware(
        get_wsgi_application(), workers=int(os.environ.get("WEB_THREADS", "8"))
    )

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from config.warmup import freeze_startup_heap, open_connections_ahead, warm_up  # noqa: E402
from config.ws_origin import SameOriginValidator  # noqa: E402
from events.routing import websocket_urlpatterns as event_seat_map_routes  # noqa: E402
from flights.routing import websocket_urlpatterns as seat_map_routes  # noqa: E402
from waitroom.routing import websocket_urlpatterns as waiting_room_routes  # noqa: E402

warm_up()
if HTTP_MODE != "asgi":
    # The fixed pool's threads keep one connection each, as config/wsgi.py's do: opened and
    # warmed now, not in the first customers' requests.  Django's ASGI handler takes its
    # connections from the psycopg pool instead, which opens them itself.
    open_connections_ahead()

application = ProtocolTypeRouter(
    {
        "http": http_application,
        # Pages of other sites are refused before any consumer code runs (config/ws_origin.py).
        "websocket": SameOriginValidator(
            URLRouter(seat_map_routes + event_seat_map_routes + waiting_room_routes)
        ),
    }
)

freeze_startup_heap()
