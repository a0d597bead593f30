"""The access log line's costs cut.  The access logger's `findCaller` (config/logs.py
`QuickCallerLogger`) answers what `logging`'s own does for every way of logging, so every
record field and every formatted line (LOG_FORMAT=json and plain) is the same as before; the
JSON formatter's encoder, made once, writes what `json.dumps` wrote; with controls."""

from __future__ import annotations

import json
import logging
import sys

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from config import logs, middleware
from config.logs import JsonFormatter, QuickCallerLogger, RequestIdFilter, quick_caller
from config.request_id import reset_request_id, set_request_id

PLAIN = logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
TIMES = ("created", "msecs", "relativeCreated")  # when: made one after the other


class Kept(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self.addFilter(RequestIdFilter())

    def emit(self, record):
        self.records.append(record)


def pair(cls) -> tuple[logging.Logger, logging.Logger, Kept]:
    """Two loggers, `logging`'s and `cls`, with one handler keeping their records."""
    kept = Kept()
    loggers = []
    for kind in (logging.Logger, cls):
        logger = kind(f"tests.quick_caller.{kind.__name__}", logging.DEBUG)
        logger.addHandler(kept)
        logger.propagate = False
        loggers.append(logger)
    return loggers[0], loggers[1], kept


def helper(logger):
    logger.info("from a helper, stacklevel 2", stacklevel=2)


def every_way(logger) -> None:
    """Each way of logging, called the same way for both loggers (the same lines)."""
    logger.info("%s %s %s", "POST", "/api/bookings", 409, extra={"status": 409})
    logger.warning("a warning")
    logger.log(logging.ERROR, "by level")
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("an exception")
    helper(logger)
    logger.info("too deep", stacklevel=50)
    logging.LoggerAdapter(logger, {"adapted": 1}).info("through an adapter")
    logger.info("with its stack", stack_info=True)


def both_ways(cls) -> list[tuple[dict, dict]]:
    ours_and_theirs = []
    plain_logger, other, kept = pair(cls)
    token = set_request_id("req-quick-0001")
    try:
        for logger in (plain_logger, other):
            every_way(logger)
    finally:
        reset_request_id(token)
    half = len(kept.records) // 2
    for theirs, ours in zip(kept.records[:half], kept.records[half:], strict=True):
        for name in TIMES:
            setattr(ours, name, getattr(theirs, name))
        ours.name = theirs.name
        ours_and_theirs.append((vars(ours), vars(theirs)))
    return ours_and_theirs


def differences(cls) -> list[str]:
    """Each record field and each formatted line (JSON, plain) that differs."""
    found = []
    for ours, theirs in both_ways(cls):
        for key in sorted(set(ours) | set(theirs)):
            if key not in ("exc_info", "exc_text") and ours.get(key) != theirs.get(key):
                found.append(f"{theirs['msg']}: {key} {ours.get(key)!r} != {theirs.get(key)!r}")
        for formatter in (JsonFormatter(), PLAIN):
            a, b = logging.makeLogRecord(ours), logging.makeLogRecord(theirs)
            if formatter.format(a) != formatter.format(b):
                found.append(f"{theirs['msg']}: {type(formatter).__name__} line")
    return found


def test_every_field_and_line_is_loggings_own():
    assert len(both_ways(QuickCallerLogger)) == 8
    assert differences(QuickCallerLogger) == []


class FixedDepth(logging.Logger):
    """Control: the caller taken at a fixed depth (findCaller, _log, info, the caller)."""

    def findCaller(self, stack_info=False, stacklevel=1):
        frame = sys._getframe(3)
        return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, None


class ThisFrame(QuickCallerLogger):
    """Control: the walk started one frame short (the stack's own frames counted)."""

    def findCaller(self, stack_info=False, stacklevel=1):
        return super().findCaller(stack_info, max(stacklevel - 1, 0))


@pytest.mark.parametrize("wrong", [FixedDepth, ThisFrame])
def test_control_a_caller_found_otherwise_is_caught(wrong):
    assert differences(wrong) != []


def test_the_access_log_is_the_configured_logger_with_the_quick_caller(rf: RequestFactory):
    access = logging.getLogger("seatkeeper.requests")
    assert middleware.access_log is access
    assert type(access) is QuickCallerLogger
    assert quick_caller(access) is access
    kept = Kept()
    access.addHandler(kept)
    try:
        handler = middleware.MetricsMiddleware(lambda request: HttpResponse())
        handler(rf.get("/healthz"))
    finally:
        access.removeHandler(kept)
    (record,) = kept.records
    code = middleware.MetricsMiddleware.__call__.__code__
    assert (record.pathname, record.funcName) == (code.co_filename, "__call__")
    assert code.co_firstlineno < record.lineno
    with open(code.co_filename) as source:
        assert "access_log.info(" in source.read().splitlines()[record.lineno - 1]


class Dumps:
    """What JsonFormatter did before: `json.dumps` with its options, every call."""

    def __init__(self, **options):
        self.options = {"default": str, "ensure_ascii": False, **options}

    def encode(self, entry):
        return json.dumps(entry, **self.options)


def records() -> list[dict]:
    """Every way's records, and one with non-ASCII text, a NaN and a non-JSON value."""
    odd = {"msg": "Zürich → 東京 %s", "args": ("x",), "odd": object, "nan": float("nan")}
    return [ours for ours, _ in both_ways(QuickCallerLogger)] + [vars(logging.makeLogRecord(odd))]


def json_lines(monkeypatch, encoder, made: list[dict]) -> list[str]:
    monkeypatch.setattr(logs, "_ENCODER", encoder)
    return [JsonFormatter().format(logging.makeLogRecord(fields)) for fields in made]


def test_the_json_encoder_made_once_writes_json_dumps_bytes(monkeypatch):
    made = records()
    ours = json_lines(monkeypatch, logs._ENCODER, made)
    assert ours == json_lines(monkeypatch, Dumps(), made)
    assert '"Zürich → 東京 x"' in ours[-1] and '"nan": NaN' in ours[-1]


def test_control_another_encoders_lines_differ(monkeypatch):
    """Control: with one option changed (ASCII escapes) the lines differ."""
    made = records()
    ours = json_lines(monkeypatch, logs._ENCODER, made)
    assert ours != json_lines(monkeypatch, Dumps(ensure_ascii=True), made)
