"""Compiles the message catalogues (locale/<lang>/LC_MESSAGES/*.po -> .mo) with Babel, in pure
Python: no GNU gettext (msgfmt) needed.  Run by ./scripts/run, ./scripts/test and the Docker
build; the .mo files are build output and never committed.

    python scripts/compile_messages.py [--check]

--check fails (exit 1) when a catalogue has an entry left untranslated or fuzzy.
"""

from __future__ import annotations

import sys
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
LOCALE_DIR = ROOT / "locale"


def compile_catalogues(*, check: bool = False) -> list[str]:
    problems: list[str] = []
    for po_path in sorted(LOCALE_DIR.glob("*/LC_MESSAGES/*.po")):
        language = po_path.parts[-3]
        with po_path.open("rb") as po_file:
            catalog = read_po(po_file, locale=language)
        for message in catalog:
            if not message.id:
                continue
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            if message.fuzzy or not all(strings):
                problems.append(f"{po_path.relative_to(ROOT)}: untranslated {message.id!r}")
        errors = [
            f"{po_path.relative_to(ROOT)}: {message.id!r}: {error}"
            for message, msg_errors in catalog.check()
            for error in msg_errors
        ]
        if errors:
            raise SystemExit("\n".join(errors))
        with po_path.with_suffix(".mo").open("wb") as mo_file:
            write_mo(mo_file, catalog)
    if check and problems:
        raise SystemExit("\n".join(problems))
    return problems


if __name__ == "__main__":
    compile_catalogues(check="--check" in sys.argv[1:])
