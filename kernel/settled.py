"""A column that never changes once set, read from PostgreSQL once per process per row.

The hot reads translate a front door's id (a flight, an event) to the engine's sale, and the
engine a sale to its kind.  Those pairs are written once and never changed (a flight owns its
sale from creation; an event's sale is set only where it is null, and PROTECTed), so a found
value is kept for the life of the process and the hot path asks no query.  A row without the
value (no such row, a draft event not on sale yet) is not kept: it is asked again next time.
"""

from __future__ import annotations

from typing import Any

from django.db import models


class SettledColumn:
    """`model.field` by primary key: read once, then kept (`known` never queries)."""

    def __init__(self, model: type[models.Model], field: str) -> None:
        self.model, self.field = model, field
        self.found: dict[Any, Any] = {}

    def __call__(self, pk: Any) -> Any:
        value = self.found.get(pk)
        if value is None:
            value = self.model.objects.filter(pk=pk).values_list(self.field, flat=True).first()
            if value is not None:
                self.found[pk] = value
        return value

    def known(self, pk: Any) -> Any:
        """The kept value, or None when this process has not met the row yet."""
        return self.found.get(pk)

    def forget(self) -> None:
        """As a fresh process (tests)."""
        self.found.clear()
