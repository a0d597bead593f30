"""Price category assignments as staff type them in the event admin.  Pure parsing."""

from __future__ import annotations

import re

from events.errors import InvalidCategoryAssignment

_ASSIGNMENT = re.compile(
    r"^([A-Za-z][A-Za-z0-9]{0,9})\s*:\s*(.+?)(?:\s+rows?\s+([A-Za-z0-9]{1,8})"
    r"(?:\s*-\s*([A-Za-z0-9]{1,8}))?)?$",
    re.IGNORECASE,
)


def parse_assignments(text: str) -> list[tuple[str, str, str, str]]:
    """Rules written one per line, ``<category>: <section> [rows <first>-<last>]``:

        A: Stalls rows 1-5
        B: Stalls rows 6-20
        B: Balcony
        GA: Floor

    as (category, section, first row, last row) tuples; bad lines are listed in one
    InvalidCategoryAssignment."""
    rules, problems = [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _ASSIGNMENT.match(line)
        if match is None:
            problems.append(f'Line {number}: expected "A: Stalls rows 1-5" or "GA: Floor".')
            continue
        first = (match[3] or "").upper()
        rules.append((match[1].upper(), match[2].strip(), first, (match[4] or first).upper()))
    if problems:
        raise InvalidCategoryAssignment(" ".join(problems))
    return rules
