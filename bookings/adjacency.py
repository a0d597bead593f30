"""Which seats are neighbours, and the single-seat rule (issue 29).  Pure: no queries.

The model, stated once.  Seats with the same `row_key` stand in one physical row (a cabin
row "12", a venue row "2-F"); `place` is the seat's position along that row in grid steps.
An aisle or a gap in the plan leaves a step out, so two seats are side by side exactly when
they share a row key and their places differ by one.  A row's ends are its lowest and
highest places.  A seat without a row key or place has no neighbours.  The catalogues fill
the two fields: a cabin from its layout (the aisle between the halves of the cabin's letters,
flights.seat_places), a venue from its plan's grid columns (events.sale_snapshot).

The single-seat rule: a hold may not leave a free seat alone, that is with neither
neighbour free, between the new seats and a taken seat, an aisle or a row end.  A seat that
was alone already is not the new hold's doing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from itertools import pairwise
from typing import Protocol


class Placed(Protocol):
    seat_no: str
    row_key: str
    place: int | None
    quality: float
    accessible: bool


def side_by_side(a: Placed, b: Placed) -> bool:
    return (
        bool(a.row_key)
        and a.row_key == b.row_key
        and a.place is not None
        and b.place is not None
        and abs(a.place - b.place) == 1
    )


def by_row(seats: Iterable[Placed]) -> dict[str, list[Placed]]:
    """Seats with a row key, grouped by it, each row in place order."""
    rows: dict[str, list[Placed]] = {}
    for seat in seats:
        if seat.row_key and seat.place is not None:
            rows.setdefault(seat.row_key, []).append(seat)
    for row in rows.values():
        row.sort(key=lambda s: s.place)
    return rows


def runs(row: Sequence[Placed]) -> list[list[Placed]]:
    """The maximal stretches of side-by-side seats of one row (in place order)."""
    stretches: list[list[Placed]] = []
    for seat in row:
        if stretches and side_by_side(stretches[-1][-1], seat):
            stretches[-1].append(seat)
        else:
            stretches.append([seat])
    return stretches


def is_block(seats: Sequence[Placed]) -> bool:
    """One row, side by side, no aisle between (in any order)."""
    ordered = sorted(seats, key=lambda s: (s.row_key, s.place if s.place is not None else -1))
    return len(ordered) == 1 or all(side_by_side(a, b) for a, b in pairwise(ordered))


def blocks(free: Iterable[Placed], n: int) -> Iterator[list[Placed]]:
    """Every block of `n` free seats side by side in one row."""
    for row in by_row(free).values():
        for stretch in runs(row):
            for start in range(len(stretch) - n + 1):
                yield stretch[start : start + n]


def alone(row_free: Sequence[Placed]) -> set[str]:
    """Seat numbers of the free seats of one row with no free neighbour."""
    return {stretch[0].seat_no for stretch in runs(row_free) if len(stretch) == 1}


def stranded_by(
    row: Sequence[Placed], *, free: Collection[str], taking: Collection[str]
) -> set[str]:
    """The seats of `row` that taking `taking` would leave alone (free, with neither neighbour
    free) that were not alone before.  `free` are the row's free seat numbers now.

    Only a neighbour of a taken seat can change, so only those are looked at: the cost is
    the taken seats', not the row's (best available asks this of every block of every row
    it ranks)."""
    at = {s.place: s for s in row if s.place is not None}
    return _stranded(at, free=free, taking=taking, taken=[s for s in row if s.seat_no in taking])


def _stranded(
    at: dict[int, Placed],
    *,
    free: Collection[str],
    taking: Collection[str],
    taken: Iterable[Placed],
) -> set[str]:
    def free_at(place: int, *, after: bool) -> bool:
        seat = at.get(place)
        return seat is not None and seat.seat_no in free and not (after and seat.seat_no in taking)

    stranded = set()
    for seat in taken:
        for place in (seat.place - 1, seat.place + 1):
            if not free_at(place, after=True):
                continue
            sides = (place - 1, place + 1)
            alone_after = not any(free_at(p, after=True) for p in sides)
            alone_before = not any(free_at(p, after=False) for p in sides)
            if alone_after and not alone_before:
                stranded.add(at[place].seat_no)
    return stranded


def stranded_in(
    rows: dict[str, list[Placed]], *, free: Collection[str], taking: Collection[str]
) -> set[str]:
    return set().union(*(stranded_by(r, free=free, taking=taking) for r in rows.values()))


def best_block(
    row_seats: Sequence[Placed],
    *,
    n: int,
    free: Collection[str],
    pickable: Callable[[Placed], bool],
    accessible: int = 0,
    may_strand: bool = False,
) -> tuple[list[Placed], bool] | None:
    """The best block of `n` seats of one row that are `pickable` (and in `free`, the row's
    free seat numbers) with at least `accessible` accessible seats, and whether it strands a
    seat: the blocks that strand none first, then by the sum of their seats' quality (lower
    is better), then nearer the row's start.  A block that strands a seat only with
    `may_strand` (the caller found nothing else fits, or the rule is off)."""
    ranked = []
    at = {s.place: s for s in row_seats if s.place is not None}
    for block in blocks([s for s in row_seats if s.seat_no in free and pickable(s)], n):
        if sum(1 for s in block if s.accessible) < accessible:
            continue
        taking = {s.seat_no for s in block}
        strands = bool(_stranded(at, free=free, taking=taking, taken=block))
        if strands and not may_strand:
            continue
        ranked.append((strands, sum(s.quality for s in block), block[0].place, block))
    if not ranked:
        return None
    strands, _quality, _place, block = min(ranked, key=lambda r: r[:3])
    return block, strands
