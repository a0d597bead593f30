"""The JSON formatter's encoder, made once (config/logs.py `_ENCODER`), writes what
`json.dumps(entry, default=str, ensure_ascii=False)` wrote for every line; with a control."""

from __future__ import annotations

import json
import logging
import sys

from config import logs
from config.logs import JsonFormatter


class Dumps:
    """What JsonFormatter did before: `json.dumps` with its options, every call."""

    def __init__(self, **options):
        self.options = {"default": str, "ensure_ascii": False, **options}

    def encode(self, entry):
        return json.dumps(entry, **self.options)


def records() -> list[dict]:
    """Records as the access log and others make them: extras, non-ASCII text, a NaN, a value
    JSON cannot write, an exception."""
    access = {
        "name": "seatkeeper.requests",
        "msg": "%s %s %s",
        "args": ("POST", "/api/v1/bookings/", 409),
        "method": "POST",
        "path": "/api/v1/bookings/",
        "route": "api/v1/bookings/",
        "status": 409,
        "duration_ms": 1.2,
        "request_id": "abc",
    }
    odd = {"msg": "Zürich → 東京 %s", "args": ("x",), "odd": object, "nan": float("nan")}
    try:
        raise ValueError("boom")
    except ValueError:
        failed = {"msg": "failed", "exc_info": sys.exc_info(), "levelname": "ERROR"}
    return [access, odd, failed, {"msg": "plain"}]


WHEN = {"created": 1796018400.25, "msecs": 250.0}  # both ways' records made at one time


def json_lines(monkeypatch, encoder) -> list[str]:
    monkeypatch.setattr(logs, "_ENCODER", encoder)
    made = [logging.makeLogRecord({**fields, **WHEN}) for fields in records()]
    return [JsonFormatter().format(record) for record in made]


def test_the_json_encoder_made_once_writes_json_dumps_bytes(monkeypatch):
    ours = json_lines(monkeypatch, logs._ENCODER)
    assert ours == json_lines(monkeypatch, Dumps())
    assert '"Zürich → 東京 x"' in ours[1] and '"nan": NaN' in ours[1]
    assert '"status": 409' in ours[0] and "ValueError: boom" in ours[2]


def test_control_another_encoders_lines_differ(monkeypatch):
    """Control: with one option changed (ASCII escapes) the lines differ."""
    assert json_lines(monkeypatch, logs._ENCODER) != json_lines(
        monkeypatch, Dumps(ensure_ascii=True)
    )
