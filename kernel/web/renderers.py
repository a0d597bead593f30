"""The API's JSON: camelCase keys, rendered by orjson, byte for byte what DRF would render.

`CamelJSONRenderer` is the API's renderer (REST_FRAMEWORK's DEFAULT_RENDERER_CLASSES).  It
gives the bytes djangorestframework-camel-case's renderer gives (keys camelCased by the same
rule, DRF's compact separators, UTF-8 unescaped, U+2028/U+2029 escaped, dates and decimals as
DRF's encoder writes them), for a fraction of the CPU: the key conversion is remembered per
key instead of run through a regular expression for every key of every answer, and orjson
writes the bytes.  Whatever orjson cannot write as `json.dumps` would (an integer beyond 64
bits, an indented answer asked for with `Accept: application/json; indent=4`) goes the
library's way.  tests/kernel/test_fast_json.py compares the two on the API's answers.

Finished JSON bodies (seat maps, search) are rendered once with `camel_json`, cached as bytes
and sent as they are, with an ETag; `cached_json_response` answers `If-None-Match` with 304.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import orjson
from django.http import HttpResponse, HttpResponseNotModified
from django.utils.cache import parse_etags
from django.utils.encoding import force_str
from django.utils.functional import Promise
from djangorestframework_camel_case.render import CamelCaseJSONRenderer
from djangorestframework_camel_case.util import camelize, camelize_re, underscore_to_camel
from rest_framework.utils.encoders import JSONEncoder

from kernel.web.headers import header

_encoder = JSONEncoder()
# Dates, times and dataclasses go to DRF's encoder (`default`), which writes them its way
# ("Z" for UTC, milliseconds); orjson writes str, int, float, bool, None, dict and list (and
# their subclasses: a TextChoices is its string) as json.dumps does.
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_LINE_SEPARATORS = re.compile(b"\xe2\x80[\xa8\xa9]")  # U+2028, U+2029 in UTF-8
_PLAIN = (str, int, bool, type(None))  # written alike by both; floats are checked
_PLAIN_TYPES = frozenset(_PLAIN)


class _NotAlike(Exception):
    """A value orjson would write otherwise than json.dumps: the library's way then."""


def _float(value: float) -> float:
    # orjson writes 1e-05 as 0.00001 and NaN as null (DRF's strict JSON refuses it).
    if value != value or value in (float("inf"), float("-inf")) or "e" in repr(value):
        raise _NotAlike
    return value


@functools.lru_cache(maxsize=4096)  # bounded: a key may come from a client's input
def _camel_key(key: str) -> str:
    return re.sub(camelize_re, underscore_to_camel, key) if "_" in key else key


def camel_keys(data: Any) -> Any:
    """djangorestframework-camel-case's `camelize` (without options, as the API uses it),
    returning plain dicts and lists; anything but dicts, lists, tuples and scalars is handed
    to the library itself.  Raises _NotAlike for a float orjson would write differently."""
    # Exact types are asked first (`type(x) is str`, `type(x) in _PLAIN_TYPES`: no call),
    # `isinstance` only for the rest: three calls a key were most of a built answer's Python.
    if type(data) is dict or isinstance(data, dict):
        out = {}
        for key, value in data.items():
            if type(key) is not str:
                if isinstance(key, Promise):
                    key = force_str(key)
                if not isinstance(key, str):
                    out[key] = _value(value)
                    continue
            out[_camel_key(key)] = (
                value
                if type(value) in _PLAIN_TYPES or isinstance(value, _PLAIN)
                else camel_keys(value)
            )
        return out
    if type(data) is list or isinstance(data, list | tuple):
        return [
            item if type(item) in _PLAIN_TYPES or isinstance(item, _PLAIN) else camel_keys(item)
            for item in data
        ]
    if isinstance(data, _PLAIN):
        return data
    if isinstance(data, float):
        return _float(data)
    return camelize(data)


def _value(value: Any) -> Any:
    return value if type(value) in _PLAIN_TYPES or isinstance(value, _PLAIN) else camel_keys(value)


def _escape_line_separators(match: re.Match) -> bytes:
    return b"\\u2028" if match.group() == b"\xe2\x80\xa8" else b"\\u2029"


def dumps(data: Any) -> bytes:
    """JSON bytes as DRF's compact, unescaped JSONRenderer writes them."""
    body = orjson.dumps(data, default=_encoder.default, option=_OPTIONS)
    if b"\xe2\x80" in body:
        body = _LINE_SEPARATORS.sub(_escape_line_separators, body)
    return body


class CamelJSONRenderer(CamelCaseJSONRenderer):
    def get_indent(self, accepted_media_type, renderer_context):
        # The media type the quick negotiation gives (`application/json`) has no parameters,
        # so it names no indent: DRF parses it only to find none (~9 calls an answer).
        if not accepted_media_type or accepted_media_type == self.media_type:
            return renderer_context.get("indent", None)
        return super().get_indent(accepted_media_type, renderer_context)

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if self.get_indent(accepted_media_type, renderer_context or {}) is None:
            try:
                return dumps(camel_keys(data))
            except (_NotAlike, orjson.JSONEncodeError, TypeError):
                pass  # e.g. an integer beyond 64 bits, 1e-05, NaN: json.dumps's answer
        return super().render(data, accepted_media_type, renderer_context)


_renderer = CamelJSONRenderer()


def camel_json(data: Any) -> bytes:
    return _renderer.render(data)


def _weak(tag: str) -> str:
    return tag[2:] if tag.startswith("W/") else tag


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 weak comparison, as `If-None-Match` asks for."""
    if not if_none_match:
        return False
    if if_none_match == etag:  # the client sent back what it was given: nothing to parse
        return True
    tags = parse_etags(if_none_match)
    return "*" in tags or _weak(etag) in {_weak(t) for t in tags}


def etag_known_to(request) -> Callable[[str], bool] | None:
    """Whether the client already has an ETag (its If-None-Match), for the cached reads'
    selectors (`known=`); None when it sent none (then the body is fetched with the ETag)."""
    if_none_match = header(request, "If-None-Match")
    return (lambda etag: etag_matches(if_none_match, etag)) if if_none_match else None


def cached_json_response(request, *, body: bytes | None, etag: str) -> HttpResponse:
    """200 with `body`, or 304 when the client's If-None-Match has `etag` (body may then be
    None: the selector did not even fetch it)."""
    # Caches may keep the body but must ask again before using it: the ETag makes that cheap.
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if body is None or etag_matches(header(request, "If-None-Match"), etag):
        return HttpResponseNotModified(headers=headers)
    return HttpResponse(body, content_type="application/json", headers=headers)
