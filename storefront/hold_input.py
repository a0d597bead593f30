"""A hold request's body, read: `BookingCreateSerializer`'s validated data, with a quick path
for the body almost every client sends.

`BookingCreateSerializer.is_valid` cost about 65 µs of a hold's CPU (fields copied and bound,
each value run through its field's validators), a loser's as much as a winner's
(docs/performance.md, "Issue 26: the winning hold's answer").  `hold_request` first tries
`_quick`, which accepts only a body that is plainly valid: known keys, each value of exactly
the type and form the field would keep unchanged (an int in range, a class code matching its
pattern, stripped printable strings of allowed lengths, a bool).  It then applies the
serializer's own `validate` (`check_hold_request`).  Anything else, and anything `validate`
refuses, goes through the serializer, so every error stays the serializer's, byte for byte.

tests/storefront/test_hold_input.py proves the two equal (the same validated data, keys in the
same order, or the serializer's error) over random bodies, valid and invalid, and shows quick
paths that are wrong in one detail are caught.
"""

from __future__ import annotations

import re
from typing import Any

from rest_framework.exceptions import ValidationError

from kernel.web.fields import CLASS_CODE_MAX_LENGTH
from kernel.web.quick_input import validated
from storefront.booking_serializers import (
    DB_BIGINT_MAX,
    BookingCreateSerializer,
    check_hold_request,
)

# BookingCreateSerializer's fields in their declared order (validated data keeps it).
_IDS = ("flight_id", "event_id", "customer_id")
_CODES = ("fare_class", "category")
_KNOWN = frozenset(
    (
        *_IDS,
        *_CODES,
        "booking_class",
        "seats",
        "passengers",
        "passenger_names",
        "exit_row_confirmed",
    )
)
_CODE = re.compile(rf"[A-Za-z0-9-]{{1,{CLASS_CODE_MAX_LENGTH}}}")  # kernel.web.fields' rule
_MAX_UNITS = 50  # `seats`, `passengers`, `passenger_names`: at most 50
_SEAT_NO_LENGTH = 16
_NAME_LENGTH = 120


def hold_request(data: Any) -> dict[str, Any]:
    """`BookingCreateSerializer(data=data)`'s validated data, or its ValidationError."""
    return validated(data, quick=_quick, serializer_class=BookingCreateSerializer)


def _quick(data: Any) -> dict[str, Any] | None:
    """The validated data of a plainly valid body; None for anything else."""
    if type(data) is not dict or not data.keys() <= _KNOWN:
        return None
    out: dict[str, Any] = {}
    for name in _IDS:
        if name in data:
            value = data[name]
            if type(value) is not int or not 1 <= value <= DB_BIGINT_MAX:
                return None
            out[name] = value
    for name in _CODES:
        if name in data:
            value = data[name]
            if type(value) is not str or not _CODE.fullmatch(value):
                return None
            out[name] = value
    if "booking_class" in data:
        value = data["booking_class"]
        if type(value) is not str or not (value == "" or _CODE.fullmatch(value)):
            return None
        out["booking_class"] = value
    if "seats" in data:
        seats = _strings(data["seats"], max_length=_SEAT_NO_LENGTH, blank=False)
        if not seats:  # also refuses an empty list (min_length=1)
            return None
        out["seats"] = seats
    if "passengers" in data:
        value = data["passengers"]
        if type(value) is not int or not 1 <= value <= _MAX_UNITS:
            return None
        out["passengers"] = value
    if "passenger_names" in data:
        names = _strings(data["passenger_names"], max_length=_NAME_LENGTH, blank=True)
        if names is None:
            return None
        out["passenger_names"] = names
    confirmed = data.get("exit_row_confirmed", False)
    if type(confirmed) is not bool:
        return None
    out["exit_row_confirmed"] = confirmed
    try:
        return check_hold_request(out)
    except ValidationError:
        return None  # the serializer says it, in its own words


def _strings(value: Any, *, max_length: int, blank: bool) -> list[str] | None:
    """A list of at most 50 strings that the list's CharField keeps as they are (already
    stripped, printable: no NUL, no surrogate), each of 1 (0 if `blank`) to `max_length`
    characters; None otherwise."""
    if type(value) is not list or len(value) > _MAX_UNITS:
        return None
    for item in value:
        if (
            type(item) is not str
            or len(item) > max_length
            or (not item and not blank)
            or item.strip() != item
            or not item.isprintable()
        ):
            return None
    return list(value)
