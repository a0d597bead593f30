"""The JSON parser: camelCase keys in, snake_case out, and every kind of bad body is a 4xx."""

from __future__ import annotations

from django.conf import settings
from djangorestframework_camel_case.parser import CamelCaseJSONParser
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "request_too_large"


class JSONParser(CamelCaseJSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        # DRF reads the stream directly, so Django's own body-size limit never applies.
        request = (parser_context or {}).get("request")
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if request is not None and limit is not None:
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > limit:
                raise RequestTooLarge()
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as exc:  # "[[[[…" nested deeper than the interpreter allows
            raise ParseError("JSON parse error - nested too deeply") from exc
