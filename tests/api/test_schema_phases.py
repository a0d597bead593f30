"""schemathesis's own runner, every phase (examples, coverage, fuzzing, stateful) and every
check, against a real uvicorn serving the test database: what a partner's contract test would
run.  tests/api/test_schema.py drives Hypothesis in-process with real ids; this one is the
outside view, with negative data (empty strings, NUL characters, out-of-range numbers, missing
headers) that the in-process test does not generate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.api.schemathesis_world import build_world
from tests.pages.conftest import start_asgi_server, stop_asgi_server

ROOT = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).with_name("schemathesis.toml")
PHASES = "examples,coverage,fuzzing,stateful"


def run_schemathesis(
    url: str, world: dict, *extra: str, schema: str | None = None
) -> subprocess.CompletedProcess:
    location = [schema, "--url", url] if schema else [f"{url}/api/schema/?format=json"]
    return subprocess.run(
        [
            str(Path(sys.executable).with_name("st")),
            "--config-file",
            str(CONFIG),
            "run",
            *location,
            "--phases",
            PHASES,
            "--checks",
            "all",
            "--header",
            f"Authorization: Token {world['token']}",
            "--seed",
            "20261204",
            "--no-color",
            *extra,
        ],
        cwd=ROOT,
        env={**os.environ, "SCHEMATHESIS_HOOKS": ""},
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture
def served():
    server = start_asgi_server("schemathesis")
    yield server
    stop_asgi_server(server)


@pytest.mark.django_db(transaction=True)
def test_every_phase_finds_no_mismatch_between_schema_and_server(served, customer):
    result = run_schemathesis(served.url, build_world(customer), "--max-examples", "15")
    summary = result.stdout[-6000:]
    assert "Examples" in result.stdout and "Stateful" in result.stdout, summary
    assert result.returncode == 0, result.stdout[-60000:] + result.stderr[-4000:]


@pytest.mark.django_db(transaction=True)
def test_control_a_schema_looser_than_the_server_fails_the_run(served, customer, tmp_path):
    """The control: the same runner against the served schema with two of this issue's fixes
    undone (the bookings list's `offset` any integer again, the event search's `date` any
    string again) finds both, so the run above would fail if the schema drifted back."""
    world = build_world(customer)
    document = httpx.get(f"{served.url}/api/schema/?format=json", timeout=30).json()
    bookings = document["paths"]["/api/bookings"]["get"]
    for parameter in bookings["parameters"]:
        if parameter["name"] == "offset":
            parameter["schema"] = {"type": "integer"}
    search = document["paths"]["/api/events"]["get"]
    for parameter in search["parameters"]:
        if parameter["name"] == "date":
            parameter["schema"] = {"type": "string"}
    loosened = tmp_path / "loosened.json"
    loosened.write_text(json.dumps(document))
    result = run_schemathesis(
        served.url,
        world,
        "--max-examples",
        "15",
        "--include-name",
        "GET /api/bookings",
        "--include-name",
        "GET /api/events",
        schema=str(loosened),
    )
    assert result.returncode != 0, result.stdout[-6000:]
    failed = result.stdout[result.stdout.find("FAILURES") :]
    assert "GET /api/bookings" in failed, result.stdout[-6000:]
    assert "GET /api/events " in failed, result.stdout[-6000:]
