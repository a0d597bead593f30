"""One rule, one place: a search query read by the quick path (flights.search_input) is what
`FlightSearchQuerySerializer` makes of it: the same validated data, keys in the same order, or,
for any query the quick path does not take, the serializer's own error.

A property-based test parses random query strings (codes of every case, length, script and
padding, dates in and out of ISO form and of the calendar, repeated and missing keys, unknown
keys, percent-escapes) into QueryDicts, as Django does, and sends them to both.  Its controls
are quick paths wrong in one detail, which the property must catch; and the query the benches
send takes the quick path.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from django.http import QueryDict
from django.test import RequestFactory
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from flights import search_input
from flights.search_input import FlightSearchQuerySerializer
from kernel.web.pagination import page_of
from tests import quick_input_checks as checks

codes = st.one_of(
    st.sampled_from(["SGN", "HAN", "sgn", "HaN", "FRA"]),
    st.sampled_from(["", " SGN", "SGN ", "SGN\n", "SG", "SGNX", "ÄBC", "S1N"]),
    st.sampled_from(["\uff33\uff27\uff2e", "\u212aAB"]),  # fullwidth SGN; the Kelvin sign
    st.from_regex(r"[A-Za-z]{3}", fullmatch=True),
    st.text(max_size=5),
)
days = st.one_of(
    st.sampled_from(["2026-12-20", "2028-02-29", "0001-01-01", "9999-12-31", "1970-01-01"]),
    st.sampled_from(["2026-02-30", "2027-02-29", "2026-13-01", "0000-01-01", "20261220"]),
    st.sampled_from(["2026-1-2", "2026-12-20 ", " 2026-12-20", "2026-12-20T10:00", "20.12.2026"]),
    st.sampled_from(["٢٠٢٦-١٢-٢٠", "2026-W51-1", "+2026-12-20", "2026-12-20\n", ""]),
    st.dates().map(lambda d: d.isoformat()),
    st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", fullmatch=True),
    st.text(max_size=11),
)
keys = st.sampled_from(["from", "to", "date", "limit", "offset", "FROM", "from ", "x", ""])
# A pair written raw or percent-escaped, as a client may send it.
escaped = st.booleans()


@st.composite
def query_strings(draw):
    pairs = []
    usual = [("from", draw(codes)), ("to", draw(codes)), ("date", draw(days))]
    for key, value in draw(st.permutations(usual))[: draw(st.integers(1, 3))]:
        pairs.append((key, value))
    pairs += draw(
        st.lists(st.tuples(keys, st.one_of(codes, days)), max_size=3),
    )
    pairs = draw(st.permutations(pairs))
    return "&".join(
        f"{quote(k)}={quote(v)}" if draw(escaped) else f"{k}={v}".replace("&", "") for k, v in pairs
    )


def serializers_answer(data):
    return checks.serializers_answer(FlightSearchQuerySerializer, data)


def check(query_string: str) -> bool:
    """The quick path's answer is the serializer's; whether the quick path took the query."""
    data = QueryDict(query_string)
    return checks.quick_path_agrees(search_input, "search_query", FlightSearchQuerySerializer, data)


def long_way(request):
    """The serializer's answer, then `page_of`'s, as the view asked them before."""
    try:
        expected = serializers_answer(request.query_params)
        if expected[0] == "invalid":
            return expected
        return "valid", expected[1], page_of(request.query_params)
    except ValidationError as error:
        return "invalid", error.detail


def check_request(query_string: str) -> bool:
    """`search_request` answers as the serializer and `page_of` do; whether the raw query
    string's quick path took it."""
    # A server hands the bytes over as latin-1 text (WSGI), as Django reads them.
    raw = query_string.encode().decode("latin-1")
    request = Request(RequestFactory().get("/api/flights", QUERY_STRING=raw))
    expected = long_way(request)
    quick = search_input._quick_query_string(raw)
    if quick is not None:
        assert expected == ("valid", list(quick.items()), page_of({}))
    try:
        query, page = search_input.search_request(request)
        got = "valid", list(query.items()), page
    except ValidationError as error:
        got = "invalid", error.detail
    assert got == expected
    return quick is not None


EDGES = [
    "from=SGN&to=HAN&date=2026-12-20",
    "from=XXX&from=SGN&to=HAN&date=2026-12-20",
    "from=SGN&to=HAN&date=2026-12-20&date=2026-12-21",
    "from=ÄBC&to=HAN&date=2026-12-20",
    "from=%C3%84BC&to=HAN&date=2026-12-20",
    "from=SGN&to=HAN&date=2026-12-20T10:00",
    "from=SGN&to=HAN&date=2026-02-30",
    "from=SGN&to=HAN",
    "from=SGN&to=HAN&date=",
    "from=sgn&to=han&date=2026-12-20&unknown=1",
    "from=SGN&to=HAN&date=2026-12-20&limit=0",
    "from=SGN&to=HAN&date=2026-12-2%30",
    "from=S+GN&to=HAN&date=2026-12-20",
    "from=SGN;to=HAN&date=2026-12-20",
    "from=SGN&to=HAN&date=2026-12-20&",
    "&from=SGN&to=HAN&date=2026-12-20",
    "from==SGN&to=HAN&date=2026-12-20",
]


def with_edges(test):
    for query in EDGES:
        test = example(query_string=query)(test)
    return test


PROPERTY = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(query_string=query_strings())
@with_edges
def test_the_quick_path_reads_a_query_as_the_serializer_does(query_string):
    check(query_string)


@PROPERTY
@given(query_string=query_strings())
@with_edges
def test_the_raw_quick_path_reads_a_request_as_the_serializer_and_page_of_do(query_string):
    check_request(query_string)


@pytest.mark.parametrize(
    "query",
    ["from=SGN&to=HAN&date=2026-12-20", "date=2026-12-20&to=han&from=sgn&from=FRA"],
)
def test_the_usual_requests_take_the_raw_quick_path(query):
    assert check_request(query)


@pytest.mark.parametrize(
    "query",
    [
        "from=SGN&to=HAN&date=2026-12-20",  # the benches' and most clients' query
        "from=sgn&to=han&date=2026-12-20&limit=20&offset=40",
        "date=2026-12-20&to=HAN&from=SGN&utm_source=mail",
    ],
)
def test_the_usual_queries_take_the_quick_path(query):
    assert check(query)


def test_anything_but_a_query_dict_goes_the_serializers_way():
    assert search_input._quick({"from": "SGN", "to": "HAN", "date": "2026-12-20"}) is None


# --- controls: quick paths wrong in one detail, each caught --------------------------------

REAL_QUICK = search_input._quick


def _first_of_repeated(data, key):
    values = dict.get(data, key)
    return values[0] if values else None


def _upper_cased(data):
    found = REAL_QUICK(data)
    if found is not None:
        found = {**found, "from": found["from"].upper(), "to": found["to"].upper()}
    return found


def _date_prefix(data):
    if type(data) is not QueryDict or "date" not in data:
        return None
    return REAL_QUICK(QueryDict(f"{data.urlencode()}&date={quote(data['date'][:10])}"))


@pytest.mark.parametrize(
    ("name", "wrong"),
    [
        ("_last", _first_of_repeated),
        ("_CODE", re.compile(r"[^\W\d_]{3}")),  # any script's letters, not the pattern's
        ("_quick", _upper_cased),
        ("_quick", _date_prefix),
    ],
)
def test_control_a_quick_path_wrong_in_one_detail_is_caught(monkeypatch, name, wrong):
    # `wrong` replaces one piece: a reader, or the code's pattern.
    monkeypatch.setattr(search_input, name, wrong)
    assert_the_property_fails(check)


def assert_the_property_fails(checked) -> None:
    """`checked(query_string)` over the generated query strings raises for one of them."""

    @settings(PROPERTY, phases=[Phase.explicit, Phase.generate])  # found is enough: no shrinking
    @given(query_string=query_strings())
    @with_edges
    def property_with_the_wrong_quick_path(query_string):
        checked(query_string)

    with pytest.raises(AssertionError):
        property_with_the_wrong_quick_path()


def _first_wins(raw):
    pairs = [pair.split("=") for pair in raw.split("&")]
    return REAL_RAW("&".join("=".join(p) for p in reversed(pairs)))


REAL_RAW = search_input._quick_query_string


@pytest.mark.parametrize(
    ("name", "wrong"),
    [
        ("_quick_query_string", _first_wins),
        ("_PLAIN_QUERY", re.compile(r"[a-z]+=[A-Za-z0-9-]*(?:&[a-z]+=[A-Za-z0-9-]*)*")),
    ],
)
def test_control_a_raw_quick_path_wrong_in_one_detail_is_caught(monkeypatch, name, wrong):
    # The first of a repeated key wins; `limit`, `offset` (and any other key) left unread.
    monkeypatch.setattr(search_input, name, wrong)
    assert_the_property_fails(check_request)


def test_the_patterns_are_the_serializers():
    # The quick path's code rule is the field's pattern, read in ASCII and in full.
    assert search_input.IATA == r"^[A-Za-z]{3}$"
    assert search_input._CODE.flags & re.ASCII
