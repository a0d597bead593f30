"""Issue 30, item 1, bots pay to queue: joining a room that requires it needs a solved
scrypt proof-of-work, issued and checked by the server, bound to the account and the room,
single-use and expiring; its difficulty grows with the places the address's /24 (IPv6 /64)
holds in the room and with new, unverified accounts, and is capped for old, verified ones
(humans behind carrier NAT).

The scrypt cost is made tiny here (N=16, r=1) so the proofs are really solved in the test;
the work is counted in tries, as the issue asks (the sum of 2^difficulty), and also as the
tries actually made."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from accounts.models import EmailAddress
from kernel.web.client_ip import address_prefix
from tests.api.conftest import client_for
from tests.waitroom.room_helpers import make_customers, no_limits, protect, small_flight
from waitroom import joining, proof_of_work, room_selectors
from waitroom.errors import ProofOfWorkInvalid, ProofOfWorkRequired
from waitroom.models import QueueEntry, WaitingRoom

pytestmark = pytest.mark.django_db(transaction=True)
User = get_user_model()


@pytest.fixture
def pow_room(room_redis, settings):
    no_limits(settings)
    # Tiny scrypt and no base bits, so 50,000 proofs are really solved in seconds; every
    # other bit counts as in production, and the ratios below do not depend on the base.
    settings.WAITING_ROOM = {
        **settings.WAITING_ROOM,
        "POW_SCRYPT_N": 16,
        "POW_SCRYPT_R": 1,
        "POW_BASE_BITS": 0,
    }
    room = protect(small_flight(), opens_at=timezone.now() + timedelta(hours=1))
    WaitingRoom.objects.filter(pk=room.pk).update(require_proof_of_work=True)
    room.refresh_from_db()
    return room


def solve(challenge: str, difficulty: int) -> tuple[str, int]:
    """What the page's script does: tries 0, 1, 2, ... (same function, hashlib's scrypt)."""
    n = 0
    while proof_of_work.leading_zero_bits(proof_of_work.work_of(challenge, str(n))) < difficulty:
        n += 1
    return str(n), n + 1


def humans(n: int) -> list:
    """Accounts made months ago with a verified address."""
    people = make_customers(n)
    User.objects.filter(pk__in=[p.pk for p in people]).update(
        date_joined=timezone.now() - timedelta(days=90)
    )
    for person in people:
        person.email = f"{person.username}@example.org"
        person.save(update_fields=["email"])
        EmailAddress.objects.create(user=person, email=person.email, verified_at=timezone.now())
    return list(User.objects.filter(pk__in=[p.pk for p in people]).order_by("id"))


def pay_and_join(room, customer, address: str) -> tuple[int, int]:
    """Ask for a challenge, solve it, join: (2^difficulty, tries made)."""
    issued = proof_of_work.issue_challenge(room=room, customer=customer, address=address)
    solution, tries = solve(issued.challenge, issued.difficulty)
    entry = joining.join_queue(
        room_id=room.pk, customer=customer, address=address, proof=(issued.challenge, solution)
    )
    assert entry.status == "WAITING" and entry.order_key is None  # a pre-queue place
    return 2**issued.difficulty, tries


def test_a_bot_farm_pays_over_20_times_the_work_of_humans_for_the_same_places(pow_room):
    people = humans(200)
    bots = make_customers(200)  # fresh accounts, no verified address
    human_work = human_tries = bot_work = bot_tries = 0
    for i, person in enumerate(people):
        work, tries = pay_and_join(pow_room, person, f"10.{i // 200}.{i % 200}.9")
        human_work, human_tries = human_work + work, human_tries + tries
    for i, bot in enumerate(bots):
        work, tries = pay_and_join(pow_room, bot, f"198.51.{i % 5}.{7 + i // 5}")
        bot_work, bot_tries = bot_work + work, bot_tries + tries
    places = QueueEntry.objects.filter(room=pow_room)
    assert places.filter(customer__in=people).count() == 200  # the same share: 200 each
    assert places.filter(customer__in=bots).count() == 200
    assert places.values("joined_prefix").distinct().count() == 205
    assert bot_work >= 20 * human_work, (bot_work, human_work)
    assert bot_tries >= 20 * human_tries, (bot_tries, human_tries)


def test_the_address_prefix_alone_makes_them_pay_20_times(pow_room):
    """Same kind of accounts on both sides (all fresh): what the places per /24 add."""
    people, bots = make_customers(200), make_customers(200)
    work = {"people": 0, "bots": 0}
    for side, accounts, address in (
        ("people", people, lambda i: f"10.{i // 200}.{i % 200}.9"),
        ("bots", bots, lambda i: f"2001:db8:0:{i % 5}::{i + 1:x}"),  # 5 IPv6 /64s
    ):
        for i, account in enumerate(accounts):
            w, _tries = pay_and_join(pow_room, account, address(i))
            work[side] += w
    assert work["bots"] >= 20 * work["people"], work


def test_challenges_fetched_in_parallel_get_harder_too(pow_room):
    bots = make_customers(40)
    difficulties = [
        proof_of_work.issue_challenge(room=pow_room, customer=b, address="198.51.100.7").difficulty
        for b in bots
    ]
    assert difficulties[-1] >= difficulties[0] + 5, difficulties


def test_old_verified_accounts_behind_one_carrier_nat_address_pay_a_capped_price(
    pow_room, settings
):
    people = humans(40)
    costs = [pay_and_join(pow_room, p, "100.64.0.1")[0] for p in people]
    cap = 2 ** settings.WAITING_ROOM["POW_TRUSTED_CAP_BITS"]
    assert max(costs) == cap  # they do pay more than a lone human ...
    assert costs[0] == 2 ** settings.WAITING_ROOM["POW_BASE_BITS"]
    assert all(c <= cap for c in costs)  # ... but never more than the cap


def test_a_proof_is_bound_to_its_account_and_room_single_use_and_expiring(pow_room):
    owner, other = make_customers(2)
    address = "192.0.2.10"
    issued = proof_of_work.issue_challenge(room=pow_room, customer=owner, address=address)
    solution, _ = solve(issued.challenge, issued.difficulty)

    # Sold on to another account: refused (400 problem+json), nothing written.
    answer = client_for(other).post(
        f"/api/waiting-rooms/{pow_room.pk}/queue",
        {"proofChallenge": issued.challenge, "proofSolution": solution},
        format="json",
    )
    assert answer.status_code == 400, answer.content
    assert answer.json()["type"].endswith("/proof-of-work-invalid")
    assert answer.json()["reason"] == "not yours"
    assert not QueueEntry.objects.filter(customer=other).exists()
    # Another room: refused.
    elsewhere = protect(small_flight())
    with pytest.raises(ProofOfWorkInvalid, match="another account or for another queue"):
        proof_of_work.spend_proof(
            room=elsewhere, customer=owner, challenge=issued.challenge, solution=solution
        )
    # A wrong answer is refused without burning the challenge ...
    wrong = next(
        str(n)
        for n in range(10_000)
        if proof_of_work.leading_zero_bits(proof_of_work.work_of(issued.challenge, str(n)))
        < issued.difficulty
    )
    with pytest.raises(ProofOfWorkInvalid) as refused:
        proof_of_work.spend_proof(
            room=pow_room, customer=owner, challenge=issued.challenge, solution=wrong
        )
    assert refused.value.extra["reason"] == "wrong"
    # ... so the owner's right answer gets in, once; replayed, it is refused.
    answer = client_for(owner).post(
        f"/api/waiting-rooms/{pow_room.pk}/queue",
        {"proofChallenge": issued.challenge, "proofSolution": solution},
        format="json",
    )
    assert answer.status_code == 200 and answer.json()["status"] == "PREQUEUE"
    with pytest.raises(ProofOfWorkInvalid) as replayed:
        proof_of_work.spend_proof(
            room=pow_room, customer=owner, challenge=issued.challenge, solution=solution
        )
    assert replayed.value.extra["reason"] == "used"
    # Joining again keeps the place and needs no new proof.
    assert joining.join_queue(room_id=pow_room.pk, customer=owner).order_key is None


def test_forged_expired_and_missing_proofs_are_refused(pow_room):
    (customer,) = make_customers(1)
    issued = proof_of_work.issue_challenge(room=pow_room, customer=customer, address=None)
    solution, _ = solve(issued.challenge, issued.difficulty)
    fields = issued.challenge.split(".")
    fields[3] = "0"  # claims difficulty 0
    with pytest.raises(ProofOfWorkInvalid) as forged:
        proof_of_work.spend_proof(
            room=pow_room, customer=customer, challenge=".".join(fields), solution="0"
        )
    assert forged.value.extra["reason"] == "forged"
    later = timezone.now() + timedelta(seconds=601)
    with pytest.raises(ProofOfWorkInvalid) as expired:
        proof_of_work.spend_proof(
            room=pow_room,
            customer=customer,
            challenge=issued.challenge,
            solution=solution,
            now=later,
        )
    assert expired.value.extra["reason"] == "expired"
    with pytest.raises(ProofOfWorkRequired):
        joining.join_queue(room_id=pow_room.pk, customer=customer)
    answer = client_for(customer).post(f"/api/waiting-rooms/{pow_room.pk}/queue")
    assert answer.status_code == 403
    assert answer.json()["challengeUrl"] == f"/api/waiting-rooms/{pow_room.pk}/challenge"
    assert not QueueEntry.objects.filter(customer=customer).exists()


def test_the_api_issues_challenges_and_the_page_says_what_is_needed_without_javascript(
    pow_room,
):
    (customer,) = make_customers(1)
    body = client_for(customer).post(f"/api/waiting-rooms/{pow_room.pk}/challenge").json()
    assert body["challenge"].startswith(f"pow1.{pow_room.pk}.{customer.pk}.")
    assert body["difficulty"] >= 3 and body["scrypt"] == {"n": 16, "r": 1, "p": 1, "dkLen": 32}
    browser = Client()
    browser.force_login(customer)
    page = browser.get(f"/waiting-room/{pow_room.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="pow-noscript"' in html and "turn on JavaScript" in html
    assert "js/scrypt.js" in html and "js/proof-of-work.js" in html


@pytest.mark.parametrize(
    ("address", "prefix"),
    [
        ("203.0.113.77", "203.0.113.0/24"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("::ffff:198.51.100.9", "198.51.100.0/24"),
        ("", ""),
        ("not an address", ""),
    ],
)
def test_address_prefixes(address, prefix):
    assert address_prefix(address) == prefix


def test_queue_status_is_unchanged_for_rooms_without_proof(room_redis, settings):
    no_limits(settings)
    room = protect(small_flight(), opens_at=timezone.now() + timedelta(hours=1))
    (customer,) = make_customers(1)
    joining.join_queue(room_id=room.pk, customer=customer, address="192.0.2.1")
    assert room_selectors.queue_status(room=room, customer_id=customer.pk)["status"] == "PREQUEUE"
