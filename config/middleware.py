"""Pages' answer to a database outage: the friendly 503 page, never Django's 500.

The API gets the same decision from its exception handler (`config.api.exceptions`); both ask
`service_unavailable`, the one place that maps an outage to 503.  Failures outside any view
(a middleware reading the session) reach `config.api.exceptions.server_error`, which asks too.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from config.api.exceptions import unavailable_response


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        # None (not an outage): Django's usual handling, and a bug stays a 500.
        return unavailable_response(request, exception)
