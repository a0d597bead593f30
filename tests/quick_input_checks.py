"""The one check of a quick body or query reader (kernel/web/quick_input.py's pattern: the
hold's, the pay's, the search's): its answer is the serializer's, valid data in the same
order or the same errors, byte for byte."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from rest_framework.exceptions import ValidationError


def serializers_answer(serializer_class: type, data: Any) -> tuple[str, Any]:
    serializer = serializer_class(data=data)
    if serializer.is_valid():
        return "valid", list(serializer.validated_data.items())
    return "invalid", serializer.errors


def quick_path_agrees(module: ModuleType, read: str, serializer_class: type, data: Any) -> bool:
    """`module._quick(data)` and `module.<read>(data)` answer as `serializer_class` does;
    whether the quick path took `data`.  Both looked up on `module` at each call, so a
    control that replaces `_quick` there is what is checked."""
    expected = serializers_answer(serializer_class, data)
    quick = module._quick(data)
    if quick is not None:
        assert ("valid", list(quick.items())) == expected
    try:
        got = "valid", list(getattr(module, read)(data).items())
    except ValidationError as error:
        got = "invalid", error.detail
    assert got == expected
    return quick is not None
