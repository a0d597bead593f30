"""Compare every UPPERCASE setting of a one-file config/settings.py from git history with
today's config.settings, in several environments, each in a fresh process.

    .venv/bin/python scripts/compare_settings.py bf2860a

bf2860a is the last commit with config/settings.py as one module; after merging a branch
that still edits that file, name the branch's commit to check the lines were re-applied to
the right parts.  Prints the differences and exits 1 if there are any.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The branches of the settings: the embedded defaults, PostgreSQL and Redis, production.
ENVIRONMENTS = {
    "no environment": {},
    "DATABASE_URL and REDIS_URL": {
        "DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/seatkeeper",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
    },
    "production-like": {
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": "a-production-secret-key-that-is-long-enough-0123456789",
        "DATABASE_URL": "postgresql://app:pw@db.internal:5432/seatkeeper",
        "DATABASE_REPLICA_URL": "postgresql://app:pw@replica.internal:5432/seatkeeper",
        "DB_PGBOUNCER": "true",
        "DB_POOL": "true",
        "REDIS_URL": "redis://redis.internal:6379/0",
        "REDIS_CLUSTER_URL": "redis://r1.internal:7000,r2.internal:7001",
        "LOG_FORMAT": "json",
        "TICKET_SIGNING_KEY": "a-ticket-signing-key",
        "NUM_PROXIES": "1",
    },
    "DEBUG on": {"DJANGO_DEBUG": "true", "DB_PREPARE_THRESHOLD": "5"},
}

# Run in the child: load the settings, print {name: repr(value)} for every UPPERCASE name.
OLD = """
import json, sys
source = sys.stdin.read()
namespace = {"__file__": sys.argv[1], "__name__": "config.settings_before"}
exec(compile(source, sys.argv[1], "exec"), namespace)
print(json.dumps({k: repr(v) for k, v in namespace.items() if k.isupper()}))
"""
NEW = """
import importlib, json
module = importlib.import_module("config.settings")
print(json.dumps({k: repr(getattr(module, k)) for k in dir(module) if k.isupper()}))
"""


def settings_of(code: str, environment: dict[str, str], *args: str, stdin: str = "") -> dict:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), **environment}
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def main(revision: str) -> int:
    source = subprocess.run(
        ["git", "show", f"{revision}:config/settings.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    differences = 0
    for name, environment in ENVIRONMENTS.items():
        old = settings_of(OLD, environment, str(ROOT / "config" / "settings.py"), stdin=source)
        new = settings_of(NEW, environment)
        changed = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        for key in changed:
            print(f"{name}: {key}\n  before: {old.get(key)}\n  now:    {new.get(key)}")
        print(f"{name}: {len(old)} settings before, {len(new)} now, {len(changed)} differ")
        differences += len(changed)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
