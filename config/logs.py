"""Log formatting: a filter that stamps every record with the current request id, a JSON
formatter (one object per line) for LOG_FORMAT=json, and a logger class that finds its caller
without Python calls (the access log line, issue 26)."""

from __future__ import annotations

import json
import logging
import os
import posixpath
import sys
from datetime import UTC, datetime

from config.request_id import get_request_id

# What `json.dumps(entry, default=str, ensure_ascii=False)` builds for every call, made once
# (it keeps only its options: `encode` is safe from any thread).
_ENCODER = json.JSONEncoder(default=str, ensure_ascii=False)
# LogRecord attributes that are not "extra" fields.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", None):
            record.request_id = get_request_id() or "-"
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or get_request_id(),
            "process": record.process,
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in entry and not key.startswith("_"):
                entry[key] = value if isinstance(value, (str, int, float, bool)) else repr(value)
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack_info"] = self.formatStack(record.stack_info)
        return _ENCODER.encode(entry)


class QuickCallerLogger(logging.Logger):
    """A `logging.Logger` whose `findCaller` is CPython 3.11's, the frame walk inlined: the
    same file, line and function for the same call (the frames of `logging` and of the import
    machinery skipped, `stacklevel` honoured), without the ~8 Python calls a record
    (`currentframe`, `_is_internal_frame` and `os.path.normcase` for each frame walked).
    `stack_info`, or a platform where `normcase` changes a name, is `logging`'s own.
    tests/ops/test_quick_caller.py compares both for every way of logging, with a control."""

    def findCaller(self, stack_info=False, stacklevel=1):
        if stack_info or os.path is not posixpath:
            return super().findCaller(stack_info, stacklevel + 1)  # this frame not counted
        internal = logging._srcfile
        frame = sys._getframe(0)
        while stacklevel > 0:
            outer = frame.f_back
            if outer is None:
                break
            frame = outer
            name = frame.f_code.co_filename
            if not (name == internal or ("importlib" in name and "_bootstrap" in name)):
                stacklevel -= 1
        code = frame.f_code
        return code.co_filename, frame.f_lineno, code.co_name, None


def quick_caller(logger: logging.Logger) -> logging.Logger:
    """`logger` (the one `logging.getLogger` keeps: levels, handlers, filters and propagate
    as configured) with `QuickCallerLogger`'s `findCaller`."""
    if type(logger) is logging.Logger:
        logger.__class__ = QuickCallerLogger
    return logger
