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
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A thread back from a database or Redis round trip waits for the GIL until a busy thread
# gives it up: Python's default is after 5 ms.  The event loop thread (HTTP parsing,
# responses) waits the same way, and a hold makes about a dozen round trips.  1 ms served
# 1.6x the requests per second at 0.6x the CPU per request (docs/performance.md).
sys.setswitchinterval(float(os.environ.get("WEB_GIL_SWITCH_MS", "1")) / 1000)
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

from config.warmup import warm_up  # noqa: E402
from config.ws_origin import SameOriginValidator  # noqa: E402
from events.routing import websocket_urlpatterns as event_seat_map_routes  # noqa: E402
from flights.routing import websocket_urlpatterns as seat_map_routes  # noqa: E402
from waitroom.routing import websocket_urlpatterns as waiting_room_routes  # noqa: E402

warm_up()

application = ProtocolTypeRouter(
    {
        "http": http_application,
        # Pages of other sites are refused before any consumer code runs (config/ws_origin.py).
        "websocket": SameOriginValidator(
            URLRouter(seat_map_routes + event_seat_map_routes + waiting_room_routes)
        ),
    }
)
