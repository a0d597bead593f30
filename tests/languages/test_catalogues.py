"""The catalogues: complete, valid, compiled by the install step and never committed."""

import importlib.util
import shutil
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


def _sizes_seen_while_writing(monkeypatch, tmp_path) -> list[int]:
    """Compiles a copy of the catalogues twice; during the second run, records the size of the
    file a reader would open at each final path while its new .mo is being written."""
    locale = tmp_path / "locale"
    shutil.copytree(ROOT / "locale", locale, ignore=shutil.ignore_patterns("*.mo"))
    compile_messages.compile_catalogues(locale_dir=locale)
    finals = sorted(locale.glob("*/LC_MESSAGES/*.mo"))
    real_write_mo = compile_messages.write_mo
    seen: list[int] = []

    def write_and_look(mo_file, catalog):
        seen.extend(path.stat().st_size for path in finals)
        real_write_mo(mo_file, catalog)

    monkeypatch.setattr(compile_messages, "write_mo", write_and_look)
    compile_messages.compile_catalogues(locale_dir=locale)
    return seen


def test_a_reader_never_sees_a_catalogue_half_written(monkeypatch, tmp_path):
    # A web node starting (or a test worker's subprocess) may read the catalogues while the
    # install step or this file's first test recompiles them.
    seen = _sizes_seen_while_writing(monkeypatch, tmp_path)
    assert seen and all(size > 4 for size in seen), seen


def test_the_half_written_control_is_seen(monkeypatch, tmp_path):
    # The control: writing straight into the target truncates it first, and the probe sees it.
    def in_place(mo_path, catalog):
        with mo_path.open("wb") as mo_file:
            compile_messages.write_mo(mo_file, catalog)

    monkeypatch.setattr(compile_messages, "_replace_mo", in_place)
    assert 0 in _sizes_seen_while_writing(monkeypatch, tmp_path)


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
