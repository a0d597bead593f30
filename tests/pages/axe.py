"""axe-core in the page: the vendored tests/pages/vendor/axe.min.js (never a CDN)."""

from __future__ import annotations

from pathlib import Path

AXE_JS = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
FAILING_IMPACTS = ("serious", "critical")


def axe_violations(page, impacts=FAILING_IMPACTS) -> list[dict]:
    """Run axe on the page as it is now; return the violations of the given impacts."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_JS))
    result = page.evaluate(
        "async () => await window.axe.run(document, {resultTypes: ['violations']})"
    )
    return [v for v in result["violations"] if v["impact"] in impacts]


def describe(violations: list[dict]) -> str:
    return "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']} — "
        + "; ".join(n["target"][0] for n in v["nodes"][:5])
        for v in violations
    )


def assert_no_serious_axe_violations(page) -> None:
    violations = axe_violations(page)
    assert not violations, f"axe on {page.url}:\n{describe(violations)}"
