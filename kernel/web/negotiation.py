"""Content negotiation that skips the parse for the headers almost every client sends.

No Accept header, `*/*` or (where the first renderer is JSON) `application/json`: DRF's
answer is always the first renderer, so it is given without parsing and ranking media types.
Any other header, a format suffix or `?format=` goes through DRF's own negotiation (a 406
stays a 406).  Whether the query names a format is first asked of the raw query string: most
hot requests (hold, seat map) have none, and parsing it into `query_params` only to find no
`format` was a few per cent of a cached seat map (issue 26).  Its own module: DRF imports it
from its settings while it builds APIView.
"""

from __future__ import annotations

from rest_framework.negotiation import DefaultContentNegotiation

_ANY = (None, "", "*/*")


def takes_first_renderer(accept: str | None, media_type: str) -> bool:
    """Whether DRF's negotiation gives the first renderer (of `media_type`) for this Accept
    header without needing to parse it (and no format named in the URL or query)."""
    return accept in _ANY or accept == media_type == "application/json"


class QuickContentNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        accept = request.META.get("HTTP_ACCEPT")
        if not format_suffix and not self._may_name_a_format(request):
            first = renderers[0]
            if takes_first_renderer(accept, first.media_type):
                return first, first.media_type
        return super().select_renderer(request, renderers, format_suffix)

    def _may_name_a_format(self, request) -> bool:
        """DRF's test (`URL_FORMAT_OVERRIDE in request.query_params`), answered without
        parsing the query when the raw string cannot hold the name: a parsed key is the raw
        one with `%xx` and `+` decoded, so without `%` it must appear as it is."""
        name = self.settings.URL_FORMAT_OVERRIDE
        query = request.META.get("QUERY_STRING", "")
        if not name or not query or (name not in query and "%" not in query):
            return False
        return name in request.query_params
