"""A flight search's query, read: `FlightSearchQuerySerializer`'s validated data, with a quick
path for the query almost every client sends.

Making, binding and validating the serializer was about a third of a warm cached search's own
work in the view (issue 26: 17,500 searches a second in the capacity model).  `search_query`
first tries `_quick`, which takes only a plainly valid query: `from` and `to` exactly three
ASCII letters (what the IATA pattern accepts, with nothing a CharField would strip), `date`
exactly `YYYY-MM-DD` in ASCII digits that `date.fromisoformat` reads (what DRF's ISO-8601
DateField tries first, so the same date).  Like the serializer it reads the last value of a
repeated key and ignores keys it does not know.  Anything else goes through the serializer,
so every 400 stays the serializer's, byte for byte.

`search_request` goes one step further for the query string almost every client sends (only
`from`, `to` and `date`, each value plain ASCII letters, digits or `-`): it reads the raw
string, which parsing would leave as it is, without building the request's QueryDict (about as
dear as the serializer's remains), and the page is then the first (`page_of` of nothing).  Any
other query string (`limit`, `offset`, an unknown key, an escape) is parsed by Django and read
as above.

tests/flights/test_search_input.py proves the quick paths equal to the serializer (and
`page_of`) over random query strings, with controls: quick paths wrong in one detail are
caught; tests/api/test_search_quick.py compares whole answers with the long way.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from django.http import QueryDict
from rest_framework import serializers

from kernel.web.lean import CopiedFields
from kernel.web.pagination import Page, page_of
from kernel.web.quick_input import validated

IATA = r"^[A-Za-z]{3}$"


class FlightSearchQuerySerializer(CopiedFields, serializers.Serializer):
    pass


# "from" is a Python keyword, so the fields are declared here rather than as attributes;
# made once, copied per request (kernel.web.lean.CopiedFields: a RegexField compiles its
# pattern when made).
FlightSearchQuerySerializer._declared_fields = {
    "from": serializers.RegexField(IATA, help_text="Origin IATA code, e.g. SGN."),
    "to": serializers.RegexField(IATA, help_text="Destination IATA code, e.g. HAN."),
    "date": serializers.DateField(
        input_formats=["iso-8601"],
        help_text="Departure date (YYYY-MM-DD) in the origin airport's local time.",
    ),
}

# ASCII only: `\d` and `[A-Za-z]` with re.ASCII, and fullmatch (no `$` before a newline).
_CODE = re.compile(r"[A-Za-z]{3}", re.ASCII)
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
_FIRST_PAGE = page_of({})  # what a query without `limit` and `offset` asks for (frozen)
# A raw query string of `from`, `to` and `date` only, in any order, repeats allowed.
_PLAIN_QUERY = re.compile(r"(?:from|to|date)=[A-Za-z0-9-]*(?:&(?:from|to|date)=[A-Za-z0-9-]*)*")


def search_query(query_params: Any) -> dict[str, Any]:
    """`FlightSearchQuerySerializer(data=query_params)`'s validated data (`from`, `to`,
    `date`), or its ValidationError."""
    return validated(query_params, quick=_quick, serializer_class=FlightSearchQuerySerializer)


def search_request(request: Any) -> tuple[dict[str, Any], Page]:
    """The search's validated query (`search_query`) and page (`page_of`), or the first
    400 of the two, as the serializer and `page_of` answer, in that order."""
    quick = _quick_query_string(request.META.get("QUERY_STRING", ""))
    if quick is not None:
        return quick, _FIRST_PAGE  # no `limit`, no `offset`
    return search_query(request.query_params), page_of(request.query_params)


def _quick(data: Any) -> dict[str, Any] | None:
    """The validated data of a plainly valid query (a QueryDict); None for anything else."""
    if type(data) is not QueryDict:
        return None
    return _plain(_last(data, "from"), _last(data, "to"), _last(data, "date"))


def _quick_query_string(raw: str) -> dict[str, Any] | None:
    """`_quick` of the QueryDict that `raw` would make, without making it (a tenth of a
    cached search's view): only for `from`, `to` and `date`, each value of characters that
    parsing leaves as they are (no `%`, `+`, `;`, `=` or `&` inside), so that splitting on
    `&` and `=` gives what QueryDict gives, the last of a repeated key winning as there."""
    if not _PLAIN_QUERY.fullmatch(raw):
        return None
    pairs = dict(pair.split("=") for pair in raw.split("&"))
    return _plain(pairs.get("from"), pairs.get("to"), pairs.get("date"))


def _plain(origin: str | None, destination: str | None, day: str | None) -> dict | None:
    if (
        origin is None
        or destination is None
        or day is None
        or not _CODE.fullmatch(origin)
        or not _CODE.fullmatch(destination)
        or not _DAY.fullmatch(day)
    ):
        return None
    try:
        parsed = date.fromisoformat(day)
    except ValueError:  # e.g. 2026-02-30: the serializer says it, in its own words
        return None
    return {"from": origin, "to": destination, "date": parsed}


def _last(data: QueryDict, key: str) -> str | None:
    # A QueryDict is a dict of each key's values (a list, never empty); the serializer reads
    # the last, as `data[key]` would, without MultiValueDict's two Python calls a key.
    values = dict.get(data, key)
    return values[-1] if values else None
