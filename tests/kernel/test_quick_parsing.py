"""The quick parts of reading a JSON body (issue 26) answer what the long way answers: the
negotiated parser (kernel/web/negotiation.py), the snake_case keys (config/api/parsers.py) and
the printable-name rule (bookings/passengers.py).  Each has a control: a quick path wrong in
one detail is caught by the same comparison."""

from __future__ import annotations

import io
import json
import sys
import unicodedata

import pytest
from django.test import RequestFactory
from djangorestframework_camel_case.parser import CamelCaseJSONParser
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import BaseParser, FormParser, MultiPartParser
from rest_framework.request import Request

from bookings.passengers import is_printable_name
from config.api.parsers import JSONParser
from kernel.web.negotiation import QuickContentNegotiation


class LongTypeParser(BaseParser):
    media_type = "application/" + "x" * 300  # longer than DRF's max_media_type_length


CONTENT_TYPES = [None, "", "application/json", "application/json; charset=utf-8",
                 "APPLICATION/JSON", "application/*", "*/*", "text/plain", "application/jsonx",
                 " application/json", "multipart/form-data; boundary=x",
                 "application/x-www-form-urlencoded", LongTypeParser.media_type]  # fmt: skip
PARSER_LISTS = [[], [JSONParser()], [FormParser(), JSONParser()], [JSONParser(), FormParser()],
                [MultiPartParser(), FormParser()], [LongTypeParser(), JSONParser()]]  # fmt: skip


def _request(content_type: str | None) -> Request:
    request = RequestFactory().generic("POST", "/api/bookings", b"{}", content_type or "x")
    if content_type is None:
        del request.META["CONTENT_TYPE"]
    else:
        request.META["CONTENT_TYPE"] = content_type
    return Request(request)


def _picks(negotiation, content_type, parsers):
    return negotiation.select_parser(_request(content_type), parsers)


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
@pytest.mark.parametrize("parsers", PARSER_LISTS)
def test_the_quick_parser_choice_is_drfs(content_type, parsers):
    quick = _picks(QuickContentNegotiation(), content_type, parsers)
    assert quick is _picks(DefaultContentNegotiation(), content_type, parsers)


class _NoLengthCheck(QuickContentNegotiation):
    def select_parser(self, request, parsers):
        if parsers and request.content_type == parsers[0].media_type:
            return parsers[0]
        return DefaultContentNegotiation.select_parser(self, request, parsers)


class _PrefixMatch(QuickContentNegotiation):
    def select_parser(self, request, parsers):
        if parsers and (request.content_type or "").startswith(parsers[0].media_type):
            return parsers[0]
        return DefaultContentNegotiation.select_parser(self, request, parsers)


@pytest.mark.parametrize("wrong", [_NoLengthCheck, _PrefixMatch])
def test_control_a_wrong_quick_parser_choice_is_caught(wrong):
    differs = [
        (content_type, parsers)
        for content_type in CONTENT_TYPES
        for parsers in PARSER_LISTS
        if _picks(wrong(), content_type, parsers)
        is not _picks(DefaultContentNegotiation(), content_type, parsers)
    ]
    assert differs


def test_the_hold_takes_the_quick_choice():
    """The comparison above is about the path holds take: their parser list starts with the
    API's JSON parser, and the bench's and test client's Content-Type is that media type."""
    from storefront.api import BookingListCreateApi

    parsers = BookingListCreateApi().get_parsers()
    assert type(parsers[0]) is JSONParser
    assert parsers[0].media_type == "application/json"


# --- snake_case keys ------------------------------------------------------------------------

NAMED = ["flightId", "fareClass", "passengerNames", "seat12A", "ABCDef", "a_b", "abc123Def",
         "", "x", "HTTPServer", "é", "ÉtéX"]  # fmt: skip
KEYS = st.sampled_from(NAMED) | st.text(max_size=8)
SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20,
)


def _both(body: bytes):
    return JSONParser().parse(io.BytesIO(body)), CamelCaseJSONParser().parse(io.BytesIO(body))


@settings(max_examples=500, deadline=None)
@given(JSON)
def test_the_keys_are_the_librarys(value):
    ours, library = _both(json.dumps(value).encode())
    assert repr(ours) == repr(library)


def test_control_lists_taken_as_leaves_are_caught(monkeypatch):
    import config.api.parsers as parsers

    monkeypatch.setattr(parsers, "_LEAVES", parsers._LEAVES | {list})
    ours, library = _both(b'{"aB": [{"cD": 1}]}')
    assert repr(ours) != repr(library)


# --- printable names ------------------------------------------------------------------------


def _long_way(name: str) -> bool:
    return all(unicodedata.category(ch) not in {"Cc", "Cs"} for ch in name)


def test_every_character_is_judged_as_the_long_way_judges_it():
    characters = (chr(cp) for cp in range(sys.maxunicode + 1))
    wrong = [ch for ch in characters if is_printable_name(ch) != _long_way(ch)]
    assert wrong == []


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(codec=None), max_size=30))
def test_names_are_judged_as_the_long_way_judges_them(name):
    assert is_printable_name(name) == _long_way(name)


def test_control_isprintable_alone_is_not_the_rule():
    # A no-break space (Zs) and a zero-width joiner (Cf) are allowed in a name, but are not
    # `isprintable`: the quick answer alone would refuse them, so the long way must decide.
    for name in ("Ana\u00a0Lima", "Ana\u200dLima", "\u00ad"):
        assert _long_way(name) and not name.isprintable()
        assert is_printable_name(name)
