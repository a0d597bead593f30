"""Best available's ranking made cheap (issue 29, bench (f)) and still the same ranking:
`ranked_blocks` reads rows lazily, floor first, and `adjacency.stranded_by` looks only at the
taken seats' neighbours.  Each is checked against the plain definition it replaces, on many
states; the control feeds the rows in the wrong order and the comparison catches it."""

from __future__ import annotations

import random
from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.utils import timezone

from bookings import adjacency, best_available
from bookings.best_available import ranked_blocks
from bookings.models import Seat, SeatStatus
from events.services import AssignmentSpec, PriceCategorySpec
from tests.events.factories import EventFactory, VenueFactory

# Rows of 3 + 5 + 4 around two aisles: odd stretches, and many equal qualities (a seat and
# its mirror image are as far from the stage centre).
BIG_HALL = """
stage: top
Section Stalls: rows 1-9 x seats 1-12; aisle after 3, 8; accessible: row 2 seats 1-3
"""


def defined_stranded_by(row, *, free, taking) -> set[str]:
    """The single-seat rule as first written: alone after minus alone before."""
    before = [s for s in row if s.seat_no in free]
    after = [s for s in before if s.seat_no not in taking]
    return adjacency.alone(after) - adjacency.alone(before)


def test_stranded_by_is_its_definition_on_random_rows():
    rng = random.Random(29)
    for trial in range(3000):
        places = sorted(rng.sample(range(1, 16), rng.randint(1, 12)))  # gaps are aisles
        row = [
            SimpleNamespace(seat_no=f"s{p}", row_key="r", place=p, quality=0.0, accessible=False)
            for p in places
        ]
        free = {s.seat_no for s in row if rng.random() < 0.7}
        taking = {s.seat_no for s in row if s.seat_no in free and rng.random() < 0.3}
        assert adjacency.stranded_by(row, free=free, taking=taking) == defined_stranded_by(
            row, free=free, taking=taking
        ), (trial, places, sorted(free), sorted(taking))


def every_row_ranked(*, sale_id, fare_class, quantity, accessible, may_strand, now):
    """The ranking as first written: every row with a free seat read and ranked at once."""
    seats = Seat.objects.filter(sale_id=sale_id).exclude(row_key="")
    ranked = []
    for row_key, row in adjacency.by_row(seats).items():
        found = best_available._choose(
            row, fare_class, quantity, accessible, may_strand=may_strand, now=now
        )
        if found is not None:
            block, strands = found
            ranked.append((strands, sum(s.quality for s in block), block[0].place, row_key, block))
    ranked.sort(key=lambda r: r[:4])
    return [(row_key, [s.seat_no for s in block]) for *_k, row_key, block in ranked]


def lazily_ranked(**ask):
    return [(row_key, [s.seat_no for s in block]) for row_key, block in ranked_blocks(**ask)]


def big_hall_event():
    return EventFactory(
        venue=VenueFactory(plan=BIG_HALL),
        prices=(PriceCategorySpec(code="A", name="Stalls", price=Decimal("50.00")),),
        assignments=(AssignmentSpec("A", "Stalls"),),
        single_seat_rule=True,
    )


def take_at_random(event, rng, share: float, *, shuffle_quality: bool = False) -> None:
    seats = list(Seat.objects.filter(sale_id=event.sale_id).values_list("pk", flat=True))
    taken = rng.sample(seats, int(len(seats) * share))
    Seat.objects.filter(pk__in=taken).update(status=SeatStatus.BLOCKED)
    if shuffle_quality:  # staff-set scores in no order of rows (a few equal ones too)
        for pk in seats:
            Seat.objects.filter(pk=pk).update(quality=rng.randint(0, 40) / 4)


ASKS = [
    dict(quantity=q, accessible=a, may_strand=m)
    for q, a in ((1, 0), (2, 0), (3, 0), (4, 0), (2, 1))
    for m in (False, True)
]


@pytest.mark.django_db
@pytest.mark.parametrize("shuffle_quality", [False, True], ids=["plan-quality", "staff-quality"])
@pytest.mark.parametrize("rows_per_read", [1, 4])
@pytest.mark.parametrize("share", [0.0, 0.3, 0.6, 0.85])
def test_the_lazy_ranking_is_the_ranking_of_every_row(
    share, rows_per_read, shuffle_quality, monkeypatch
):
    monkeypatch.setattr(best_available, "ROWS_PER_READ", rows_per_read)
    event = big_hall_event()
    take_at_random(event, random.Random(int(share * 100)), share, shuffle_quality=shuffle_quality)
    now = timezone.now()
    for ask in ASKS:
        common = dict(sale_id=event.sale_id, fare_class="A", now=now, **ask)
        assert lazily_ranked(**common) == every_row_ranked(**common), ask


@pytest.mark.django_db
def test_the_first_block_reads_only_the_first_rows(django_assert_max_num_queries):
    event = big_hall_event()
    ask = dict(sale_id=event.sale_id, fare_class="A", quantity=2, may_strand=False)
    with django_assert_max_num_queries(2):  # the floors, then one batch of rows
        next(ranked_blocks(now=timezone.now(), **ask))


@pytest.mark.django_db
def test_control_a_floor_that_is_no_floor_yields_blocks_too_early(monkeypatch):
    """The guard is the floor: a block waits until no unread row could beat it.  Claim the
    unread rows are all worse than they are, and blocks come out of the first rows read
    before better ones of later rows."""
    monkeypatch.setattr(best_available, "ROWS_PER_READ", 1)
    event = big_hall_event()
    take_at_random(event, random.Random(3), 0.3, shuffle_quality=True)
    real = best_available._row_floors

    def overstated(**kwargs):
        return [(floor + 1000.0, row_key) for floor, row_key in real(**kwargs)]

    monkeypatch.setattr(best_available, "_row_floors", overstated)
    common = dict(sale_id=event.sale_id, fare_class="A", quantity=2, accessible=0, may_strand=False)
    now = timezone.now()
    assert lazily_ranked(now=now, **common) != every_row_ranked(now=now, **common)
