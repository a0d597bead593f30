"""The OpenAPI schema is committed (docs/openapi.yaml) and must equal what the code generates,
as Saleor keeps its schema.graphql: every change to the API contract shows in review as a diff
of that file, and a refactor that changes the contract by accident fails here.

After an intended change, regenerate it:

    UPDATE_OPENAPI=1 ./scripts/test tests/api/test_schema_snapshot.py

and say in the change what moved (docs/architecture.md, "API contract changes")."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from django.core.management import call_command

SNAPSHOT = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"


def _generated(tmp_path: Path) -> str:
    out = tmp_path / "openapi.yaml"
    call_command("spectacular", "--file", str(out), "--validate", "--fail-on-warn")
    return out.read_text()


def _contract_diff(committed: str, generated: str) -> str:
    return "".join(
        difflib.unified_diff(
            committed.splitlines(keepends=True),
            generated.splitlines(keepends=True),
            "docs/openapi.yaml",
            "generated",
            n=2,
        )
    )


def test_the_committed_schema_is_what_the_code_generates(tmp_path):
    generated = _generated(tmp_path)
    if os.environ.get("UPDATE_OPENAPI") == "1":
        SNAPSHOT.write_text(generated)
    diff = _contract_diff(SNAPSHOT.read_text(), generated)
    assert not diff, (
        "The API contract changed; regenerate docs/openapi.yaml if it was meant to "
        "(see this module's docstring):\n" + diff[:6000]
    )


def test_control_a_renamed_path_parameter_is_caught(tmp_path):
    generated = _generated(tmp_path)
    renamed = generated.replace("name: bookingId", "name: bookingRef", 1)
    assert "+        name: bookingId" in _contract_diff(renamed, generated)
