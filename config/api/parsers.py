"""The JSON parser: camelCase keys in, snake_case out, and every kind of bad body is a 4xx.

Keys are converted as djangorestframework-camel-case's `underscoreize` converts them (its own
function, with the API's options), remembered per key: a body's keys are a handful of names
sent again and again, and the library compiles and runs a regular expression for each one
(issue 26).  The JSON itself is still `json.loads`, which decides what a body may contain.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from django.conf import settings
from djangorestframework_camel_case.parser import CamelCaseJSONParser
from djangorestframework_camel_case.util import camel_to_underscore
from rest_framework.exceptions import ParseError


class JSONParser(CamelCaseJSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return self.snake_keys(json.loads(stream.read().decode(encoding)))
        except RecursionError as exc:  # "[[[[…" nested deeper than the interpreter allows
            raise ParseError("JSON parse error - nested too deeply") from exc
        except ValueError as exc:  # the library's message for bad JSON or bad encoding
            raise ParseError(f"JSON parse error - {exc}") from exc

    def snake_keys(self, data: Any) -> Any:
        """`underscoreize(data, **self.json_underscoreize)` for what json.loads returns."""
        if type(data) in _LEAVES:
            return data
        if isinstance(data, dict):
            options = self.json_underscoreize
            if options.get("ignore_fields") or options.get("ignore_keys"):
                from djangorestframework_camel_case.util import underscoreize

                return underscoreize(data, **options)
            snake = _snake_key_rule(bool(options.get("no_underscore_before_number")))
            # A scalar value is kept as it is without a call per value (issue 26).
            return {
                (snake(key) if isinstance(key, str) else key): (
                    value if type(value) in _LEAVES else self.snake_keys(value)
                )
                for key, value in data.items()
            }
        if isinstance(data, list):
            return [item if type(item) in _LEAVES else self.snake_keys(item) for item in data]
        return data


# What json.loads makes besides dicts and lists: kept as they are (exact types: a subclass,
# which json.loads never makes, still takes the long way).
_LEAVES = frozenset((str, int, float, bool, type(None)))


@functools.cache
def _snake_key_rule(no_underscore_before_number: bool):
    @functools.lru_cache(maxsize=4096)  # bounded: keys are the client's
    def snake(key: str) -> str:
        return camel_to_underscore(key, no_underscore_before_number=no_underscore_before_number)

    return snake
