"""Log formatting: a filter that stamps every record with the current request id, and a JSON
formatter (one object per line) for LOG_FORMAT=json."""

from __future__ import annotations

import json
import logging
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
