"""WSGI entry point, for a WSGI server (granian --interface wsgi, gunicorn -k gthread): Django's
WSGI handler as config/served.py serves it.

The same process settings as config/asgi.py's HTTP: one persistent database connection per
HTTP thread (threads live as long as the process), the GIL's short switch interval, and the
one-time costs paid before the first request, the HTTP threads' database and Redis connections
among them (opened and warmed ahead); then the heap built so far is frozen out of the cyclic
collector's way (config/warmup.py).
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DB_CONN_MAX_AGE", "60")

from config.warmup import shorten_gil_switch

shorten_gil_switch()

import django  # noqa: E402

django.setup(set_prefix=False)  # as django.core.wsgi.get_wsgi_application does

# Django's WSGI handler, less Django's request signals around a cached read and the
# iterator protocol for a plain response's body (config/served.py).
from config.served import ServedHandler  # noqa: E402

application = ServedHandler()

from config.warmup import freeze_startup_heap, open_connections_ahead, warm_up  # noqa: E402

warm_up()
open_connections_ahead()
freeze_startup_heap()
