"""Issue 30, item 2, priority lanes: staff issue presale codes (single-use or counted); a
code is bound to the account that redeems it; code holders queue in their own lane and are
admitted first, or at the share of the admission rate staff set.  A code works once, also
when many accounts race for it (the control shows the race without the guard)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from tests.api.conftest import client_for
from tests.concurrency import run_concurrently
from tests.waitroom.room_helpers import make_customers, no_limits, protect, small_flight
from waitroom import admission, joining, lanes, presale, queue, room_selectors
from waitroom.errors import PresaleCodeInvalid, PresaleCodeUsedUp
from waitroom.models import Lane, PresaleCode, PresaleRedemption, QueueEntry, WaitingRoom

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def room(room_redis, settings):
    no_limits(settings)
    return protect(small_flight(rows=10), opens_at=timezone.now() - timedelta(seconds=30))


def test_a_single_use_code_works_once_and_binds_to_its_account(room):
    (code,) = presale.issue_presale_codes(room_id=room.pk, count=1)
    owner, other = make_customers(2)

    entry = joining.join_queue(room_id=room.pk, customer=owner, presale_code=code.code.lower())
    assert entry.lane == Lane.PRIORITY
    # The owner may send it again: same place, no second use.
    again = joining.join_queue(room_id=room.pk, customer=owner, presale_code=code.code)
    assert again.pk == entry.pk
    code.refresh_from_db()
    assert code.uses == 1

    # Anyone else: 409 problem+json, nothing written (no place, no redemption).
    answer = client_for(other).post(
        f"/api/waiting-rooms/{room.pk}/queue", {"presaleCode": code.code}, format="json"
    )
    assert answer.status_code == 409, answer.content
    assert answer.json()["type"].endswith("/presale-code-used-up")
    assert not QueueEntry.objects.filter(room=room, customer=other).exists()
    assert list(PresaleRedemption.objects.values_list("customer_id", flat=True)) == [owner.pk]

    # An unknown code is bad input: 400, nothing written.
    answer = client_for(other).post(
        f"/api/waiting-rooms/{room.pk}/queue", {"presaleCode": "NOPE"}, format="json"
    )
    assert answer.status_code == 400
    assert answer.json()["type"].endswith("/presale-code-invalid")
    assert not QueueEntry.objects.filter(room=room, customer=other).exists()
    # A code of another room is unknown here.
    elsewhere = protect(small_flight())
    (foreign,) = presale.issue_presale_codes(room_id=elsewhere.pk, count=1)
    with pytest.raises(PresaleCodeInvalid):
        joining.join_queue(room_id=room.pk, customer=other, presale_code=foreign.code)


def test_a_counted_code_serves_as_many_accounts_as_it_allows(room):
    (code,) = presale.issue_presale_codes(room_id=room.pk, count=1, uses_allowed=3)
    people = make_customers(4)
    for person in people[:3]:
        assert joining.join_queue(room_id=room.pk, customer=person, presale_code=code.code).lane
    with pytest.raises(PresaleCodeUsedUp):
        joining.join_queue(room_id=room.pk, customer=people[3], presale_code=code.code)
    code.refresh_from_db()
    assert code.uses == 3


def _race_for_one_code(room, n: int = 12):
    (code,) = presale.issue_presale_codes(room_id=room.pk, count=1)
    people = make_customers(n)
    outcomes = run_concurrently(
        [
            lambda p=p: joining.join_queue(room_id=room.pk, customer=p, presale_code=code.code)
            for p in people
        ]
    )
    return code, outcomes


@pytest.mark.concurrency
def test_accounts_racing_for_a_single_use_code_one_wins(room):
    code, outcomes = _race_for_one_code(room)
    assert len(outcomes.results) == 1, outcomes.errors
    assert outcomes.error_kinds == {"PresaleCodeUsedUp": 11}
    code.refresh_from_db()
    assert code.uses == 1
    assert PresaleRedemption.objects.filter(code=code).count() == 1
    assert QueueEntry.objects.filter(room=room, lane=Lane.PRIORITY).count() == 1


@pytest.mark.concurrency
def test_control_without_the_conditional_update_the_code_is_used_twice(room, monkeypatch):
    """The guard is `claim_use`'s conditional update.  Replaced by read-check-write (with a
    moment between read and write, as a busy server has), the same race redeems the
    single-use code for several accounts: the test above is able to fail."""

    def unguarded_claim(*, sale_id: int, code_id: int) -> bool:
        codes = PresaleCode.objects.filter(sale_id=sale_id)
        uses, allowed = codes.values_list("uses", "uses_allowed").get(pk=code_id)
        if uses >= allowed:
            return False
        time.sleep(0.05)
        codes.filter(pk=code_id).update(uses=uses + 1)
        return True

    monkeypatch.setattr(presale, "claim_use", unguarded_claim)
    code, outcomes = _race_for_one_code(room)
    assert len(outcomes.results) > 1
    assert PresaleRedemption.objects.filter(code=code).count() > 1


def test_code_holders_are_admitted_first(room):
    """Share 100: the priority lane goes first, even for those who joined last, and every
    page's place counts the lane ahead of it."""
    t0 = room.opens_at
    general, holders = make_customers(5), make_customers(3)
    codes = presale.issue_presale_codes(room_id=room.pk, count=3)
    for person in general:
        joining.join_queue(room_id=room.pk, customer=person)
    admission.admit_shoppers(room_id=room.pk, now=t0)  # the shuffle
    for person, code in zip(holders, codes, strict=True):
        joining.join_queue(room_id=room.pk, customer=person, presale_code=code.code)
    # A general place moved to the lane by a code redeemed later keeps going first too.
    late_code = presale.issue_presale_codes(room_id=room.pk, count=1)[0]
    joining.join_queue(room_id=room.pk, customer=general[-1], presale_code=late_code.code)

    first = room_selectors.queue_status(room=room, customer_id=holders[0].pk)
    assert (first["lane"], first["position"]) == ("PRIORITY", 1)
    assert room_selectors.queue_status(room=room, customer_id=general[0].pk)["position"] >= 5
    assert queue.take_lane_change(room.pk)  # the next broadcast makes every page re-read

    WaitingRoom.objects.filter(pk=room.pk).update(max_inside=4)
    step = admission.admit_shoppers(room_id=room.pk, now=t0 + timedelta(seconds=10))
    admitted = set(
        QueueEntry.objects.filter(pk__in=step.admitted).values_list("customer_id", flat=True)
    )
    assert admitted == {p.pk for p in holders} | {general[-1].pk}


def test_a_share_keeps_that_part_of_the_rate_for_the_lane(room):
    """Share 25 %: of 8 admitted while both lanes wait, 2 come from the priority lane, in
    steps of one, like the beat's ticks."""
    WaitingRoom.objects.filter(pk=room.pk).update(priority_share=25, admit_per_minute=60)
    room.refresh_from_db()
    t0 = room.opens_at
    codes = presale.issue_presale_codes(room_id=room.pk, count=1, uses_allowed=8)
    for person in make_customers(8):
        joining.join_queue(room_id=room.pk, customer=person, presale_code=codes[0].code)
    for person in make_customers(8):
        joining.join_queue(room_id=room.pk, customer=person)
    admission.admit_shoppers(room_id=room.pk, now=t0)  # the shuffle (no rate credit yet)
    for second in range(1, 9):
        admission.admit_shoppers(room_id=room.pk, now=t0 + timedelta(seconds=second))
    admitted = QueueEntry.objects.filter(room=room, status="ADMITTED")
    assert admitted.count() == 8
    assert admitted.filter(lane=Lane.PRIORITY).count() == 2


@pytest.mark.parametrize(
    ("take", "share", "credit", "priority", "general", "expected"),
    [
        (10, 100, 0.0, 20, 20, (10, 0)),  # first: all from the lane
        (10, 0, 0.0, 20, 20, (0, 10)),  # no share: none
        (10, 30, 0.0, 20, 20, (3, 7)),
        (10, 30, 0.0, 1, 20, (1, 9)),  # the lane runs short: general fills in
        (10, 30, 0.0, 20, 2, (8, 2)),  # general runs short: the lane fills in
        (1, 25, 0.75, 5, 5, (1, 0)),  # a carried fraction becomes a place
    ],
)
def test_split_take(take, share, credit, priority, general, expected):
    got = lanes.split_take(
        take=take, share=share, credit=credit, priority_waiting=priority, general_waiting=general
    )
    assert got[:2] == expected
    assert 0.0 <= got[2] <= 1.0


def test_the_lane_shows_in_the_schema():
    assert connection.vendor == "postgresql"
    client = client_for(make_customers(1)[0])
    schema = client.get("/api/schema/?format=json").json()
    body = schema["components"]["schemas"]["JoinInputRequest"]
    assert "presaleCode" in body["properties"]
