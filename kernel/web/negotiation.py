"""Content negotiation that skips the parse for the headers almost every client sends.

No Accept header, `*/*` or (where the first renderer is JSON) `application/json`: DRF's
answer is always the first renderer, so it is given without parsing and ranking media types.
Any other header, a format suffix or `?format=` goes through DRF's own negotiation (a 406
stays a 406).  Its own module: DRF imports it from its settings while it builds APIView.
"""

from __future__ import annotations

from rest_framework.negotiation import DefaultContentNegotiation

_ANY = (None, "", "*/*")


class QuickContentNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        accept = request.META.get("HTTP_ACCEPT")
        if not format_suffix and self.settings.URL_FORMAT_OVERRIDE not in request.query_params:
            first = renderers[0]
            if accept in _ANY or accept == first.media_type == "application/json":
                return first, first.media_type
        return super().select_renderer(request, renderers, format_suffix)
