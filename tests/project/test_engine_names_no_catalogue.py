"""The engine and the other apps below the catalogues never name a catalogue model in a
string (issue 25): an ORM lookup such as `sale__flight__code` or an app label such as
"flights.Flight" is an upward import that import-linter cannot see.  They reach the catalogue
item through the registry instead (`bookings.catalogue.owner_paths`, `detail_paths`,
`search_fields`).  A grep, with a control showing it catches a planted line."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: ORM lookups through a Sale into a catalogue item, or onto a catalogue item's key.
ORM_LOOKUP = re.compile(
    r"sale__(?:flight|event)(?=__|\W|$)|(?<![a-z])(?:flight|event)__(?:pk|id)\b"
)
#: App labels and dotted paths of the catalogues ("flights.Flight", 'events.models').
APP_LABEL = re.compile(r"[\"'](?:flights|events)\.")

#: Apps below the catalogues in the stack (docs/architecture.md): neither kind of string.
BELOW_CATALOGUES = (
    "bookings",
    "payments",
    "partners",
    "waitroom",
    "storefront",
    "kernel",
    "accounts",
)
#: `config` is the wiring above everything (its URLs and schema settings name the catalogues'
#: modules, rightly), but it reaches data through the registry too: ORM lookups only.
CHECKED = {app: (ORM_LOOKUP, APP_LABEL) for app in BELOW_CATALOGUES} | {"config": (ORM_LOOKUP,)}


def catalogue_names(app_dir: Path, patterns) -> list[str]:
    """`path:line: text` of every line of the app's code (migrations aside: history) that
    matches one of `patterns`."""
    hits = []
    for path in sorted(app_dir.rglob("*.py")):
        if "migrations" in path.relative_to(app_dir).parts:
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if any(p.search(line) for p in patterns):
                hits.append(f"{path.relative_to(app_dir.parent)}:{number}: {line.strip()}")
    return hits


def test_apps_below_the_catalogues_name_no_catalogue_model():
    dirty = {app: catalogue_names(ROOT / app, patterns) for app, patterns in CHECKED.items()}
    assert {app: hits for app, hits in dirty.items() if hits} == {}


def test_control_the_grep_catches_a_planted_line(tmp_path):
    app = tmp_path / "engine"
    (app / "migrations").mkdir(parents=True)
    (app / "clean.py").write_text('paths = catalogue.owner_paths("sale__")\n')
    (app / "migrations" / "0001_initial.py").write_text('to = "flights.Flight"\n')
    assert catalogue_names(app, (ORM_LOOKUP, APP_LABEL)) == []
    planted = [
        'Booking.objects.select_related("sale__flight__origin")',
        "Ticket.objects.filter(sale__event__venue=venue)",
        "Sale.objects.filter(flight__pk=1)",
        "models.ForeignKey('flights.Flight', on_delete=models.CASCADE)",
        'apps.get_model("events.Event")',
    ]
    (app / "upward.py").write_text("\n".join(planted) + "\n")
    assert len(catalogue_names(app, (ORM_LOOKUP, APP_LABEL))) == len(planted)
    # config is checked for ORM lookups only: its URLs name the catalogues' modules.
    assert len(catalogue_names(app, (ORM_LOOKUP,))) == 3
