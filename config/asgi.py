"""ASGI entry point: Django over HTTP, seat-map and waiting-room websockets over Channels.

Run it with a real server, e.g. `uvicorn config.asgi:application`.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Set up Django (apps, settings) before anything imports models.
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from config.ws_origin import SameOriginValidator  # noqa: E402
from flights.routing import websocket_urlpatterns as seat_map_routes  # noqa: E402
from waitroom.routing import websocket_urlpatterns as waiting_room_routes  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Pages of other sites are refused before any consumer code runs (config/ws_origin.py).
        "websocket": SameOriginValidator(URLRouter(seat_map_routes + waiting_room_routes)),
    }
)
