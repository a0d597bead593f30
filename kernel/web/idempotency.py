"""The API side of Idempotency-Key (rules: `kernel.idempotency`): the header's schema and
turning an `IdempotentResult` into a response that says when it is a replay."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response

from kernel.idempotency import MAX_KEY_LENGTH, IdempotentResult
from kernel.web.problems import PROBLEM_CONTENT_TYPE

RETRY_ADVICE = (
    "Send one key per intended write (e.g. a UUID), at most "
    f"{MAX_KEY_LENGTH} characters, and retry with the same key after a 5xx (503 "
    "`service-unavailable` or `too-busy`), a timeout or a dropped connection: the write "
    "happens at most once and the retry gets its answer. Repeating the key with the same body "
    "replays the stored answer (`Idempotent-Replayed: true`); with a different body it is 422; "
    "while the first request is still running it is 409. Keys are scoped to the customer."
)


def idempotency_key_parameter(*, required: bool, what: str) -> OpenApiParameter:
    return OpenApiParameter(
        "Idempotency-Key",
        # `clean_key`: not blank, at most MAX_KEY_LENGTH characters.
        {"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH, "pattern": r"\S"},
        OpenApiParameter.HEADER,
        required=required,
        description=f"{'Required' if required else 'Recommended'} for every {what}. "
        + RETRY_ADVICE,
    )


def idempotent_response(result: IdempotentResult, **kwargs) -> Response:
    response = Response(
        result.body,
        status=result.status,
        content_type=PROBLEM_CONTENT_TYPE if result.status >= 400 else None,
        **kwargs,
    )
    if result.replayed:
        response["Idempotent-Replayed"] = "true"
    return response
