"""The sale engine (bookings/) never imports a catalogue: flights (and events) register with
it through bookings.catalogue instead.  The import-linter contract (pyproject.toml, proved by
tests/project/test_import_contract.py) forbids that too; this test says it of the engine in
one place, reading every module of bookings/ and failing on any `flights` or `events` import
that is not in the list below, which only ever shrinks."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "bookings"

# Front-door code still inside bookings/ that imports a catalogue, each with why and where to
# (none left: the gate and the tickets ask bookings.catalogue).
KNOWN_EXCEPTIONS: set[str] = set()


def catalogue_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [n for n in names if n == "flights" or n.startswith(("flights.", "events."))]
    return found


def engine_modules() -> list[Path]:
    return sorted(p for p in ENGINE.rglob("*.py") if "migrations" not in p.parts)


def test_the_engine_imports_no_catalogue():
    offenders = {
        str(path.relative_to(ENGINE)): names
        for path in engine_modules()
        if (names := catalogue_imports(path)) and path.name not in KNOWN_EXCEPTIONS
    }
    assert offenders == {}


def test_every_known_exception_is_still_needed():
    """Fix one and this fails: take it off the list."""
    assert [name for name in sorted(KNOWN_EXCEPTIONS) if not catalogue_imports(ENGINE / name)] == []


def test_the_check_would_see_an_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import json\nfrom flights.models import Flight\nimport flights.rules\n")
    assert catalogue_imports(probe) == ["flights.models", "flights.rules"]
