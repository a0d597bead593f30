"""Compiles the message catalogues (locale/<lang>/LC_MESSAGES/*.po -> .mo) with Babel, in pure
Python: no GNU gettext (msgfmt) needed.  Run by ./scripts/run, ./scripts/test and the Docker
build; the .mo files are build output and never committed.

    python scripts/compile_messages.py [--check]

--check fails (exit 1) when a catalogue has an entry left untranslated or fuzzy.

Each .mo is written beside its target and renamed over it: another process (a web node
starting, a test worker's subprocess) reading the catalogue meanwhile sees the old file or the
new one, never a truncated one.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
LOCALE_DIR = ROOT / "locale"


def compile_catalogues(*, check: bool = False, locale_dir: Path = LOCALE_DIR) -> list[str]:
    problems: list[str] = []
    root = locale_dir.parent
    for po_path in sorted(locale_dir.glob("*/LC_MESSAGES/*.po")):
        language = po_path.parts[-3]
        with po_path.open("rb") as po_file:
            catalog = read_po(po_file, locale=language)
        for message in catalog:
            if not message.id:
                continue
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            if message.fuzzy or not all(strings):
                problems.append(f"{po_path.relative_to(root)}: untranslated {message.id!r}")
        errors = [
            f"{po_path.relative_to(root)}: {message.id!r}: {error}"
            for message, msg_errors in catalog.check()
            for error in msg_errors
        ]
        if errors:
            raise SystemExit("\n".join(errors))
        _replace_mo(po_path.with_suffix(".mo"), catalog)
    if check and problems:
        raise SystemExit("\n".join(problems))
    return problems


def _replace_mo(mo_path: Path, catalog) -> None:
    # ".name.XXXX.mo" so a file left by a killed run is still covered by .gitignore's *.mo.
    handle, scratch = tempfile.mkstemp(dir=mo_path.parent, prefix=f".{mo_path.stem}.", suffix=".mo")
    try:
        with os.fdopen(handle, "wb") as mo_file:
            write_mo(mo_file, catalog)
        os.chmod(scratch, 0o644)
        os.replace(scratch, mo_path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise


if __name__ == "__main__":
    compile_catalogues(check="--check" in sys.argv[1:])
