"""A request header read from the WSGI environ, without building `request.headers`.

Django's `request.headers` is a case-insensitive dict of every header, made on first use: two
calls per header the client sent, on every request that asks for one (the request id, the
seat map's and the search's If-None-Match, the hold's Idempotency-Key; issue 26).  `header`
reads the one environ key that dict would have read, named by Django's own rule
(`HttpHeaders.to_wsgi_name`), so the answer is the same.
"""

from __future__ import annotations

from functools import lru_cache

from django.http.request import HttpHeaders

wsgi_name = lru_cache(maxsize=64)(HttpHeaders.to_wsgi_name)


def header(request, name: str, default=None):
    """`request.headers.get(name, default)`: the same value, one environ lookup."""
    return request.META.get(wsgi_name(name), default)
