"""A web process does not load, at its start, the libraries only a few requests use: Stripe's
SDK (with httpx and rich), and the ticket files' qrcode, Pillow and ReportLab.  Together they
were ~20 MB of each web process's RSS, against a 150 MB budget (issue 26); they are imported
on first use (payments.gateways.stripe `_sdk`, storefront.ticket_views `ticket_file`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ON_FIRST_USE = ("stripe", "httpx", "rich", "qrcode", "PIL", "reportlab")

# The entry point as granian loads it (its warm-up fills the URL reverse table, which imports
# every URLconf and view), then what a Stripe webhook and a ticket download import.
PROBE = """
import json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ["WEB_WARM_CONNECTIONS"] = "0"
watched = json.loads(sys.argv[1])
def loaded():
    return sorted(name for name in watched if name in sys.modules)
import config.wsgi
from django.urls import get_resolver
get_resolver().url_patterns
started = loaded()
from payments.gateways.stripe import _sdk
_sdk()
from storefront.ticket_views import ticket_file
import bookings.ticket_render
print(json.dumps({"started": started, "used": loaded()}))
"""


def test_a_web_process_starts_without_the_libraries_of_rare_requests():
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(ON_FIRST_USE)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["started"] == []
    # Control: the probe sees each of them once what needs it runs (a module imported at
    # start under another name, or never detected, would fail one of the two).
    assert seen["used"] == sorted(ON_FIRST_USE)
