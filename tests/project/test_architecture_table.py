"""docs/architecture.md's app table cannot drift (issue 25, item 5): every module it names
exists, and every function, class or setting it names in a row is defined in that row's app
(or in a module the row names by path).  The control shows the check catches a stale row."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def table_rows(text: str) -> list[tuple[str, str]]:
    """(app, key-modules cell) of each row of the "Apps and what each owns" table."""
    section = text.split("## Apps and what each owns", 1)[1]
    rows = []
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append((cells[0].strip("`"), cells[-1]))
        elif rows and not line.startswith("|"):
            break
    return rows


def _defined_names(paths: list[Path]) -> set[str]:
    names: set[str] = set()
    definition = re.compile(
        r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)|^\s*(\w+)\s*(?::[^=\n]*)?=", re.M
    )
    namespace = re.compile(r"^app_name\s*=\s*\"(\w+)\"", re.M)  # URL namespaces
    for path in paths:
        text = path.read_text(encoding="utf-8")
        names.update(n for match in definition.finditer(text) for n in match.groups() if n)
        names.update(namespace.findall(text))
        names.add(path.stem)  # a module named without its .py (the parts of a package)
    return names


def stale_entries(rows: list[tuple[str, str]], root: Path = ROOT) -> list[str]:
    problems = []
    for app, cell in rows:
        app_dir = root / app
        if not app_dir.is_dir():
            problems.append(f"{app}: no such app")
            continue
        tokens = re.findall(r"`([^`]+)`", cell)
        modules = [t for t in tokens if t.endswith((".py", "/")) and " " not in t]
        sources = [p for p in app_dir.rglob("*.py") if "migrations" not in p.parts]
        for module in modules:
            # "bookings/inventory.py" is a path from the root, "services.py" one in the app.
            candidates = [app_dir / module, root / module]
            found = next((c for c in candidates if c.exists()), None)
            if found is None:
                problems.append(f"{app}: module {module} does not exist")
            elif found.is_file() and not found.is_relative_to(app_dir):
                sources.append(found)
        defined = _defined_names(sources)
        for name in tokens:
            if IDENTIFIER.match(name) and name != app and name not in defined:
                problems.append(f"{app}: `{name}` is defined nowhere in {app}/")
    return problems


def test_every_module_and_name_in_the_app_table_exists():
    rows = table_rows(DOC.read_text(encoding="utf-8"))
    assert {app for app, _ in rows} >= {"bookings", "payments", "storefront", "waitroom"}
    assert stale_entries(rows) == []


def test_control_a_stale_module_and_a_stale_name_are_caught():
    rows = [
        ("bookings", "`services.py` (`hold_seats`), `holding.py` (`check_flight_open`)"),
        ("nosuchapp", "`x.py`"),
    ]
    assert stale_entries(rows) == [
        "bookings: module services.py does not exist",
        "bookings: `check_flight_open` is defined nowhere in bookings/",
        "nosuchapp: no such app",
    ]
