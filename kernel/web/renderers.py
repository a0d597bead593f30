"""Finished JSON bodies: rendered once, cached as bytes, sent as they are (with an ETag).

`camel_json` renders exactly what the API's default renderer would (camelCase keys, DRF's
compact JSON), so a cached body is byte-for-byte the body a serializer would have produced.
`cached_json_response` answers `If-None-Match` with 304 when the ETag still matches.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse, HttpResponseNotModified
from django.utils.cache import parse_etags
from djangorestframework_camel_case.render import CamelCaseJSONRenderer

_renderer = CamelCaseJSONRenderer()


def camel_json(data: Any) -> bytes:
    return _renderer.render(data)


def _weak(tag: str) -> str:
    return tag[2:] if tag.startswith("W/") else tag


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 weak comparison, as `If-None-Match` asks for."""
    if not if_none_match:
        return False
    tags = parse_etags(if_none_match)
    return "*" in tags or _weak(etag) in {_weak(t) for t in tags}


def cached_json_response(request, *, body: bytes | None, etag: str) -> HttpResponse:
    """200 with `body`, or 304 when the client's If-None-Match has `etag` (body may then be
    None: the selector did not even fetch it)."""
    # Caches may keep the body but must ask again before using it: the ETag makes that cheap.
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if body is None or etag_matches(request.headers.get("If-None-Match"), etag):
        return HttpResponseNotModified(headers=headers)
    return HttpResponse(body, content_type="application/json", headers=headers)
