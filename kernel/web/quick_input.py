"""A request body's validated data: a quick path for the body almost every client sends, the
serializer for anything else.

The hold and the pay (storefront/hold_input.py, payments/pay_input.py) each have a `quick`
reader that accepts only a plainly valid body and returns exactly what the serializer's
`validated_data` would, or None.  Everything else goes through the serializer, so every
error stays the serializer's, byte for byte; each reader's tests prove the two equal over
random bodies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework.serializers import BaseSerializer


def validated(
    data: Any,
    *,
    quick: Callable[[Any], dict[str, Any] | None],
    serializer_class: type[BaseSerializer],
) -> dict[str, Any]:
    """`quick(data)` when it reads the body; else `serializer_class(data=data)`'s validated
    data, or its ValidationError."""
    read = quick(data)
    if read is not None:
        return read
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
