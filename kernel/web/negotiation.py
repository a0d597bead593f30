"""Content negotiation that skips the parse for the headers almost every client sends.

No Accept header, `*/*` or (where the first renderer is JSON) `application/json`: DRF's
answer is always the first renderer, so it is given without parsing and ranking media types.
Any other header, a format suffix or `?format=` goes through DRF's own negotiation (a 406
stays a 406).  Whether the query names a format is first asked of the raw query string: most
hot requests (hold, seat map) have none, and parsing it into `query_params` only to find no
`format` was a few per cent of a cached seat map (issue 26).  The parser likewise: a
`Content-Type` equal to the first parser's media type (`application/json`, as clients send
it) is that parser, as DRF's matching would find (~15 calls of a hold's ~1,800); any other
goes through DRF's own matching.  Its own module: DRF imports it from its settings while it
builds APIView.
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

    def select_parser(self, request, parsers):
        # Equal strings parse to equal media types, and a media type matches itself, so DRF's
        # loop (`media_type_matches` of each parser in turn) would stop at the first parser;
        # DRF first refuses an over-long Content-Type (415), which the length keeps.
        content_type = request.content_type
        if (
            parsers
            and content_type == parsers[0].media_type
            and len(content_type) <= self.max_media_type_length
        ):
            return parsers[0]
        return super().select_parser(request, parsers)

    def _may_name_a_format(self, request) -> bool:
        """DRF's test (`URL_FORMAT_OVERRIDE in request.query_params`), answered without
        parsing the query when the raw string cannot hold the name: a parsed key is the raw
        one with `%xx` and `+` decoded, so without `%` it must appear as it is."""
        name = self.settings.URL_FORMAT_OVERRIDE
        query = request.META.get("QUERY_STRING", "")
        if not name or not query or (name not in query and "%" not in query):
            return False
        return name in request.query_params
