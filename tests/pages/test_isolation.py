"""One failing browser test never takes the rest down (issue 10).

A pytest run of its own runs tests/pages/isolation_probe.py with the real `browser` fixture
failing on purpose, twice, each followed by a plain database test that must pass."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
PROBE = "tests/pages/isolation_probe.py"


def run_probe() -> tuple[dict[str, str], str]:
    # Its own database name, so its test database is not ours.
    url = urlsplit(os.environ["DATABASE_URL"])
    database_url = url._replace(path=url.path.rstrip("/") + "_isolation").geturl()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            PROBE,
            "--nomigrations",
            "-p",
            "no:cacheprovider",
            "-rA",
            "-q",
        ],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": database_url, "CHROMIUM_PATH": ""},
        capture_output=True,
        text=True,
        timeout=300,
    )
    outcomes = {}
    for outcome, name in re.findall(
        rf"^(PASSED|FAILED|ERROR) {re.escape(PROBE)}::(\w+)", result.stdout, re.MULTILINE
    ):
        outcomes.setdefault(name, outcome)  # ERROR at teardown comes after PASSED/FAILED
        if outcome == "ERROR":
            outcomes[name] = "ERROR"
    return outcomes, result.stdout


def where_it_says(text: str, output: str) -> set[str]:
    """The report sections (or short-summary lines) of pytest's output that contain `text`."""
    found, section = set(), ""
    for line in output.splitlines():
        header = re.fullmatch(r"[_=]{3,} (.+?) [_=]{3,}", line)
        if header:
            section = header.group(1)
        elif text in line:
            summary = re.match(r"(PASSED|FAILED|ERROR) \S+", line)
            found.add(summary.group(0) if summary else section)
    return found


def test_a_failing_browser_test_leaves_nothing_behind():
    outcomes, output = run_probe()
    assert outcomes == {
        "test_baseline": "PASSED",
        # the fixture fails loudly with the reason, it does not skip
        "test_browser_that_cannot_start": "ERROR",
        "test_plain_database_test_after_a_browser_that_did_not_start": "PASSED",
        "test_browser_step_that_fails": "FAILED",
        "test_plain_database_test_after_a_failed_browser_step": "PASSED",
        "test_nothing_left_behind": "PASSED",
        "test_control_a_connection_left_open_is_still_seen": "PASSED",
        # control: a leaked Playwright loop is caught at the test that leaked it ...
        "test_control_leaks_playwright_on_purpose": "ERROR",
        # ... and the test after it still runs its ORM calls
        "test_plain_database_test_after_the_leak": "PASSED",
    }, output
    assert "Chromium did not start (/nonexistent/chromium)" in output
    assert "ERROR at teardown of test_control_leaks_playwright_on_purpose" in output
    assert "ERROR at teardown" not in output.replace(
        "ERROR at teardown of test_control_leaks_playwright_on_purpose", ""
    ), output
    assert "left an event loop running in the main thread" in output
    # Only the test that leaked pays for it (its own database teardown fails too); no
    # SynchronousOnlyOperation anywhere else.
    assert where_it_says("SynchronousOnlyOperation", output) <= {
        "ERROR at teardown of test_control_leaks_playwright_on_purpose",
        f"ERROR {PROBE}::test_control_leaks_playwright_on_purpose",
    }, output
    # the run ends with the time per test directory
    assert re.search(r"time per test directory.*\n\s+[\d.]+s  tests/pages\n", output), output
