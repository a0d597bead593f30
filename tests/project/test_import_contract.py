"""The one-way stack (docs/architecture.md, "The stack") is enforced by import-linter: the
contract in pyproject.toml holds for the code as it is, and it fails when a module imports up
the stack.  No import is ignored: issue 14 ended the last known violation."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def contract() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(cwd)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def copy_of_the_code(target: Path) -> Path:
    """The project's packages (Python files only) and its pyproject.toml, in `target`."""
    for package in contract()["root_packages"]:
        if (ROOT / package).is_dir():
            shutil.copytree(
                ROOT / package,
                target / package,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "templates", "static"),
            )
    shutil.copy(ROOT / "pyproject.toml", target / "pyproject.toml")
    return target


def test_the_import_contract_holds():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    assert all("ignore_imports" not in c for c in contract()["contracts"])


def test_the_kernel_is_the_bottom_layer_and_forbids_every_app():
    contracts = {c["id"]: c for c in contract()["contracts"]}
    stack, kernel = contracts["stack"], contracts["kernel"]
    layers = [layer.split("#")[0].strip() for layer in stack["layers"]]
    assert layers[0] == "config" and layers[-3:] == ["bookings", "accounts", "kernel | languages"]
    assert set(kernel["forbidden_modules"]) == set(contract()["root_packages"]) - {"kernel"}


def test_the_check_in_sync_reads_the_event_log_and_nothing_else_of_ours():
    sync = {c["id"]: c for c in contract()["contracts"]}["checkin_sync"]
    assert set(sync["forbidden_modules"]) == set(contract()["root_packages"]) - {
        "kernel",
        "checkin_sync",
    }


def test_an_import_up_the_stack_breaks_the_contract(tmp_path):
    code = copy_of_the_code(tmp_path)
    assert lint_imports(code).returncode == 0  # the copy alone is as clean as the original
    (code / "kernel" / "upward.py").write_text("from bookings.models import Booking  # noqa\n")
    (code / "bookings" / "upward.py").write_text("from payments import paying  # noqa\n")
    (code / "flights" / "upward.py").write_text("import config.settings  # noqa\n")

    result = lint_imports(code)

    assert result.returncode != 0
    assert "Imports point down the stack BROKEN" in result.stdout
    assert "The kernel imports nothing of ours BROKEN" in result.stdout
    for line in (
        "kernel.upward -> bookings.models",
        "bookings.upward -> payments.paying",
        "flights.upward -> config.settings",
    ):
        assert line in result.stdout, result.stdout
