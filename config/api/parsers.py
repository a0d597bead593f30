"""The JSON parser: camelCase keys in, snake_case out, and every kind of bad body is a 4xx."""

from __future__ import annotations

from djangorestframework_camel_case.parser import CamelCaseJSONParser
from rest_framework.exceptions import ParseError


class JSONParser(CamelCaseJSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as exc:  # "[[[[…" nested deeper than the interpreter allows
            raise ParseError("JSON parse error - nested too deeply") from exc
