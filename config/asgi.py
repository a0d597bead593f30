"""ASGI entry point: Django over HTTP, seat-map websockets over Channels.

Run it with a real server, e.g. `uvicorn config.asgi:application`.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Under the ASGI server every request runs in a thread of its own: connections come from a
# per-process pool (config/settings.py, docs/performance.md).  DB_POOL=0 opts out.
os.environ.setdefault("DB_POOL", "1")
# Set up Django (apps, settings) before anything imports models.
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from config.ws_origin import SameOriginValidator  # noqa: E402
from flights.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Pages of other sites are refused before any consumer code runs (config/ws_origin.py).
        "websocket": SameOriginValidator(URLRouter(websocket_urlpatterns)),
    }
)
