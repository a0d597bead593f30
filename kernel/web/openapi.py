"""OpenAPI pieces shared by every endpoint: the problem-details body and its responses."""

from __future__ import annotations

import re
from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from kernel.web.problems import PROBLEM_CONTENT_TYPE

PROBLEM_DESCRIPTIONS = {
    400: "Invalid input. `invalidParams` names each offending field (camelCase path) and why.",
    401: "No credentials, or wrong ones. Send `Authorization: Token <token>`.",
    403: "Authenticated but not allowed (also: the CSRF check failed for session auth).",
    404: "No such resource, or it belongs to someone else.",
    409: "Conflict: a seat was just taken (`seats` names them), the fare class is sold out "
    "(`fareClass`), or the booking is in a state that does not allow this.",
    410: "The hold expired; its seats were released.",
    412: "A precondition failed: what `If-Match` names is no longer current (read it again).",
    413: "The request body is too large.",
    415: "Send `Content-Type: application/json`.",
    422: "The request is well-formed but cannot be processed as sent.",
    428: "Send `If-Match` with the `ETag` the resource was read with.",
    429: 'Too many requests (the limits are in the README, "Limits", and in each '
    "operation's description); retry after `Retry-After` seconds.",
    503: "Too busy right now (lock timeout); retry after `Retry-After` seconds.",
}
RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {"type": "integer", "minimum": 0},
    }
}


# 201s that confirm something addressable elsewhere than a `*_create` resource.
LOCATION_OF = {"bookings_pay": "The booking just confirmed (`GET` it for its tickets)."}
IN_FLIGHT_RETRY_AFTER = {
    "Retry-After": {
        "description": "With `idempotency-key-in-flight`: seconds before retrying with the key.",
        "required": False,
        "schema": {"type": "integer", "minimum": 0},
    }
}


def _header_names(operation: dict[str, Any]) -> set[str]:
    return {p.get("name") for p in operation.get("parameters", []) if p.get("in") == "header"}


class InvalidParamSerializer(serializers.Serializer):
    name = serializers.CharField(help_text='Field path as sent, e.g. "seats[1]"; "" = whole body.')
    reason = serializers.CharField()


class ProblemSerializer(serializers.Serializer):
    """RFC 9457 problem details; extension members appear only where they apply."""

    type = serializers.URLField(help_text="Identifies the problem type; stable, machine-readable.")
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField(required=False, help_text="Human-readable; safe to show.")
    invalid_params = InvalidParamSerializer(many=True, required=False)
    seats = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="The seats the problem is about (unavailable, unknown, in another class).",
    )
    fare_class = serializers.CharField(required=False)
    field = serializers.CharField(required=False)
    retry_after = serializers.IntegerField(required=False)
    problems = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Every problem found, each in words, so all can be fixed in one go (a venue "
        "plan's seats).",
    )
    plan_version = serializers.IntegerField(
        required=False, help_text="A venue plan's version now (`venue-plan-changed`)."
    )

    class Meta:
        ref_name = "Problem"


def problems(*statuses: int, **descriptions: str) -> dict[tuple[int, str], OpenApiResponse]:
    """`responses=` entries for `@extend_schema`: each status as problem+json.

    Override a description with e.g. `s409="..."`.
    """
    return {
        (status, PROBLEM_CONTENT_TYPE): OpenApiResponse(
            ProblemSerializer,
            description=descriptions.get(f"s{status}", PROBLEM_DESCRIPTIONS.get(status, "")),
        )
        for status in statuses
    }


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def camel_case_path_parameters(
    result: dict[str, Any], generator, request, public
) -> dict[str, Any]:
    """Postprocessing hook: path parameters in camelCase, like every body (`{bookingId}`, not
    Django's `{booking_id}`).  Only their names in the schema change; the URLs are the same."""
    paths = {}
    for path, operations in result.get("paths", {}).items():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "path":
                    parameter["name"] = _camel(parameter["name"])
        paths[re.sub(r"\{(\w+)\}", lambda m: "{" + _camel(m.group(1)) + "}", path)] = operations
    result["paths"] = paths
    return result


def add_problem_headers(result: dict[str, Any], generator, request, public) -> dict[str, Any]:
    """Postprocessing hook: document the headers that travel with some answers."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for status, response in operation.get("responses", {}).items():
                if status in ("429", "503"):
                    response.setdefault("headers", {}).update(RETRY_AFTER)
                elif status == "401":
                    response.setdefault("headers", {})["WWW-Authenticate"] = {
                        "description": "The authentication scheme to use: `Token`.",
                        "schema": {"type": "string"},
                    }
                elif status == "201" and operation.get("operationId", "").endswith("_create"):
                    # Only the `*_create` operations make an addressable resource.
                    response.setdefault("headers", {})["Location"] = {
                        "description": "URL of the created resource.",
                        "schema": {"type": "string"},
                    }
                elif status == "201" and operation.get("operationId") in LOCATION_OF:
                    response.setdefault("headers", {})["Location"] = {
                        "description": LOCATION_OF[operation["operationId"]],
                        "schema": {"type": "string"},
                    }
                elif status == "409" and "Idempotency-Key" in _header_names(operation):
                    response.setdefault("headers", {}).update(IN_FLIGHT_RETRY_AFTER)
    return result


# DRF's CharField (and every field built on it) refuses a NUL character with a 400, and the
# others (dates, numbers) cannot parse one: every string the server reads excludes it.
NO_NUL_PATTERN = r"^[^\u0000]*$"


def _request_strings(schema: dict[str, Any], components: dict[str, Any], seen: set[str]):
    """Every string schema a request body may carry, following `$ref`s once each."""
    ref = schema.get("$ref")
    if ref:
        name = ref.rsplit("/", 1)[-1]
        if name not in seen:
            seen.add(name)
            yield from _request_strings(components.get(name, {}), components, seen)
        return
    for key in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(key, []):
            yield from _request_strings(sub, components, seen)
    for prop in schema.get("properties", {}).values():
        if not prop.get("readOnly"):
            yield from _request_strings(prop, components, seen)
    if "items" in schema:
        yield from _request_strings(schema["items"], components, seen)
    if schema.get("type") == "string":
        yield schema


def forbid_nul_in_request_strings(
    result: dict[str, Any], generator, request, public
) -> dict[str, Any]:
    """Postprocessing hook: a request string with no `pattern` or `enum` of its own gets
    `NO_NUL_PATTERN`, so the schema forbids the NUL the server refuses (issue 31); a decimal
    needs a digit.  Own patterns already exclude NUL (tests/api/test_request_strings.py
    checks both)."""
    components = result.get("components", {}).get("schemas", {})
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for media in operation.get("requestBody", {}).get("content", {}).values():
                for string in _request_strings(media.get("schema", {}), components, set()):
                    if "pattern" not in string and "enum" not in string:
                        string["pattern"] = NO_NUL_PATTERN
                    elif string.get("format") == "decimal":
                        string["pattern"] = _strict_decimal(string["pattern"])
    return result


# drf-spectacular's decimal pattern (`^-?\d{0,10}(?:\.\d{0,2})?$`) lets "", "-" and "." through,
# which DRF's DecimalField refuses: at least one digit, as the server reads it.
_LAX_DECIMAL = re.compile(r"^\^-\?\\d\{0,(\d+)\}\(\?:\\\.\\d\{0,(\d+)\}\)\?\$$")


def _strict_decimal(pattern: str) -> str:
    found = _LAX_DECIMAL.match(pattern)
    if not found:
        return pattern
    whole, places = found.groups()
    return rf"^-?(?:\d{{1,{whole}}}(?:\.\d{{0,{places}}})?|\.\d{{1,{places}}})$"
