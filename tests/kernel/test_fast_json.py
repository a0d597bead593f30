"""The API's orjson renderer writes the bytes djangorestframework-camel-case's renderer writes,
and the quick content negotiation picks what DRF's would (kernel/web/renderers.py, lean.py)."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import orjson
import pytest
from django.test import RequestFactory
from django.utils.translation import gettext_lazy
from djangorestframework_camel_case.render import CamelCaseJSONRenderer
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.utils.serializer_helpers import ReturnDict, ReturnList

from bookings.models import BookingStatus
from kernel.web.negotiation import QuickContentNegotiation
from kernel.web.renderers import CamelJSONRenderer, camel_json

UTC = dt.UTC


class Key(str):
    """A str subclass (as a TextChoices member is): a key camelCased, a value written as is."""


ANSWERS = [
    {
        Key("seat_no"): Key("row_1"),
        "is_exit": True,
        "n": BookingStatus.HELD,
        "b": [False, Key("x_y")],
    },
    {"booking_id": 7, "status": BookingStatus.HELD, "expires_at": "2026-12-06T00:10:00Z"},
    {"seat_no": "12A", "row_2": 1, "fare_class_code": "Y", "price": Decimal("19.90")},
    {"when": dt.datetime(2026, 12, 6, 0, 10, 5, 123456, tzinfo=UTC), "day": dt.date(2026, 1, 2)},
    {"naive": dt.datetime(2026, 12, 6, 0, 10), "at": dt.time(9, 30), "id": uuid.uuid4()},
    {"title": gettext_lazy("Not found."), gettext_lazy("lazy_key"): [1, 2.5, None, True]},
    {"name": "Ana\u2028Lima\u2029", "city": "Zürich", "emoji": "✈", "quote": '"\\'},
    {"invalid_params": [{"name": "passenger_names", "reason": "too_long"}], "x_y_z": {}},
    {"nested": ({"a_b": (1, 2)}, [{"c_d": []}]), 3: "int key", "": "empty"},
    {"ratio": 0.1, "tiny": 1e-05, "big": 1e16, "neg": -0.0, "int_big": 2**70},
    [{"flight_id": 1}, {"flight_id": 2}],
    "plain string",
    12,
    [],
    {},
]


@pytest.mark.parametrize("data", ANSWERS)
def test_the_bytes_are_the_librarys(data):
    assert CamelJSONRenderer().render(data) == CamelCaseJSONRenderer().render(data)
    assert camel_json(data) == CamelCaseJSONRenderer().render(data)


def test_serializer_containers_and_indent_are_the_librarys():
    data = ReturnDict(
        {"seat_map": ReturnList([{"seat_no": "1A"}], serializer=None)}, serializer=None
    )
    assert CamelJSONRenderer().render(data) == CamelCaseJSONRenderer().render(data)
    indented = "application/json; indent=2"
    assert CamelJSONRenderer().render(data, indented) == CamelCaseJSONRenderer().render(
        data, indented
    )
    assert CamelJSONRenderer().render(None) == b""


def test_nan_is_refused_as_drf_refuses_it():
    with pytest.raises(ValueError):
        CamelCaseJSONRenderer().render({"x": float("nan")})
    with pytest.raises(ValueError):
        CamelJSONRenderer().render({"x": float("nan")})


def test_control_a_camel_keys_that_skips_a_step_is_caught(monkeypatch):
    """camel_keys asks exact types first and falls back to `isinstance`; the comparison above
    is what holds it to the library.  Control: one that stops at the first level (values not
    walked) writes other bytes for a nested answer."""
    from kernel.web import renderers

    def first_level_only(data):
        if type(data) is dict:
            return {renderers._camel_key(k): v for k, v in data.items()}
        return data

    monkeypatch.setattr(renderers, "camel_keys", first_level_only)
    nested = {"invalid_params": [{"param_name": "passenger_names"}]}
    assert CamelJSONRenderer().render(nested) != CamelCaseJSONRenderer().render(nested)


def test_control_plain_orjson_is_not_the_same_bytes():
    # What the renderer guards against: orjson on its own writes dates, small floats and the
    # line separators otherwise than DRF, so the passthrough, the float check and the escape
    # are needed for the cached bodies to be the API's bytes.
    when = {"when": dt.datetime(2026, 12, 6, 0, 10, 5, 123456, tzinfo=UTC)}
    assert orjson.dumps(when) != JSONRenderer().render(when)
    assert orjson.dumps({"tiny": 1e-05}) != JSONRenderer().render({"tiny": 1e-05})
    assert orjson.dumps({"n": "a\u2028"}) != JSONRenderer().render({"n": "a\u2028"})


ACCEPTS = [None, "*/*", "application/json", "application/json; indent=4", "application/*",
           "text/html, application/json;q=0.9", "application/problem+json, */*"]  # fmt: skip


@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("query", ["", "?format=json"])
def test_negotiation_picks_what_drf_picks(accept, query):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(RequestFactory().get("/api/flights" + query, **headers))
    renderers = [CamelJSONRenderer()]
    quick = QuickContentNegotiation().select_renderer(request, renderers)
    drf = DefaultContentNegotiation().select_renderer(request, renderers)
    assert (type(quick[0]), quick[1]) == (type(drf[0]), drf[1])


def test_negotiation_still_refuses_what_it_cannot_render():
    request = Request(RequestFactory().get("/api/flights", HTTP_ACCEPT="text/html"))
    with pytest.raises(NotAcceptable):
        QuickContentNegotiation().select_renderer(request, [CamelJSONRenderer()])


BODIES = [
    b'{"flightId": 1, "fareClass": "Y", "passengerNames": ["Ana"], "exitRowConfirmed": true}',
    b'{"seat12A": 1, "x": {"innerKey2B": [{"aB": 1}]}, "ABCDef": 1, "abc123Def": 2}',
    b'[1, 2, {"aBC": "x"}]',
    b'"a string"',
    b'{"weird": NaN, "big": 1e400, "deep": [[[{"kK": null}]]]}',
]


@pytest.mark.parametrize("body", BODIES)
def test_the_parser_gives_the_librarys_keys(body):
    import io

    from djangorestframework_camel_case.parser import CamelCaseJSONParser

    from config.api.parsers import JSONParser

    ours = JSONParser().parse(io.BytesIO(body))
    library = CamelCaseJSONParser().parse(io.BytesIO(body))
    assert repr(ours) == repr(library)  # repr: NaN is not equal to itself
