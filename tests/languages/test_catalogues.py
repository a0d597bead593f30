"""The catalogues: complete, valid, compiled by the install step and never committed."""

import importlib.util
import subprocess
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "compile_messages", ROOT / "scripts/compile_messages.py"
)
compile_messages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compile_messages)


def test_every_entry_is_translated_and_compiles():
    assert compile_messages.compile_catalogues(check=True) == []
    for language in ("de", "ru"):
        for domain in ("django", "djangojs"):
            assert (ROOT / "locale" / language / "LC_MESSAGES" / f"{domain}.mo").stat().st_size


def test_russian_plurals_have_their_forms():
    with (ROOT / "locale/ru/LC_MESSAGES/django.po").open("rb") as handle:
        catalog = read_po(handle, locale="ru")
    forms = catalog.get(("%(counter)s seat left", "%(counter)s seats left")).string
    assert forms[:3] == (
        "осталось %(counter)s место",
        "осталось %(counter)s места",
        "осталось %(counter)s мест",
    )


def test_compiled_catalogues_are_never_committed():
    tracked = subprocess.run(
        ["git", "ls-files", "locale"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked and all(path.endswith(".po") for path in tracked), tracked
    assert "*.mo" in (ROOT / ".gitignore").read_text().splitlines()


def test_the_install_steps_compile_them():
    assert "compile_messages" in (ROOT / "scripts/run").read_text()
    assert "compile_messages" in (ROOT / "scripts/test").read_text()
    assert "RUN python scripts/compile_messages.py" in (ROOT / "Dockerfile").read_text()
