"""The small hall the seat-map editor's tests draw on (admin page and API alike): two rows of
four seats in the stalls, category A, and a standing floor of 40, GA."""

from __future__ import annotations

from decimal import Decimal

from events.services import AssignmentSpec, PriceCategorySpec

HALL = """
stage: top
Section Stalls: rows 1-2 x seats 1-4
Standing Floor: capacity 40
"""
PRICES = (
    PriceCategorySpec(code="A", name="Stalls", price=Decimal("50.00")),
    PriceCategorySpec(code="GA", name="Floor", price=Decimal("20.00")),
)
RULES = (AssignmentSpec("A", "Stalls"), AssignmentSpec("GA", "Floor"))
