"""The page's scrypt (static/js/scrypt.js, written here: WebCrypto's PBKDF2 plus our own
Salsa20/8 and ROMix) agrees with Python's hashlib.scrypt, which checks every proof: run
under Node (same WebCrypto API as the browser), on RFC 7914's vector and on the proof's own
parameters; and a proof the script solves for a real challenge is accepted by the server."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from tests.waitroom.room_helpers import make_customers, no_limits, protect, small_flight
from waitroom import joining, proof_of_work
from waitroom.models import WaitingRoom

ROOT = Path(__file__).resolve().parents[2]
SCRYPT_JS = ROOT / "static" / "js" / "scrypt.js"

HARNESS = """
const s = require(process.argv[1]);
const cases = JSON.parse(process.argv[2]);
const enc = new TextEncoder();
(async () => {
  const out = {hashes: [], solved: null};
  for (const c of cases.hashes) {
    const d = await s.scrypt(enc.encode(c.password), enc.encode(c.salt), c.n, c.r, c.p, c.dkLen);
    out.hashes.push(Buffer.from(d).toString("hex"));
  }
  if (cases.solve) {
    const c = cases.solve;
    out.solved = await s.solve(c.challenge, c.difficulty, c.scrypt);
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
"""

CASES = [
    {"password": "password", "salt": "NaCl", "n": 1024, "r": 8, "p": 16, "dkLen": 64},
    {
        "password": "pow1.3.17.6.1767225600.00ff00ff00ff00ff.ab",
        "salt": "0",
        "n": 1024,
        "r": 8,
        "p": 1,
        "dkLen": 32,
    },
    {
        "password": "pow1.3.17.6.1767225600.00ff00ff00ff00ff.ab",
        "salt": "123456",
        "n": 16,
        "r": 1,
        "p": 1,
        "dkLen": 32,
    },
    {"password": "ünïcode ✓", "salt": "42", "n": 256, "r": 2, "p": 2, "dkLen": 48},
]


def run_node(cases: dict) -> dict:
    node = shutil.which("node")
    if node is None:  # Debian's nodejs package; the test must not pass without it
        pytest.fail("node is needed to check static/js/scrypt.js (apt-get install nodejs)")
    done = subprocess.run(
        [node, "-e", HARNESS, str(SCRYPT_JS), json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_script_and_hashlib_agree():
    got = run_node({"hashes": CASES})["hashes"]
    expected = [
        hashlib.scrypt(
            c["password"].encode(),
            salt=c["salt"].encode(),
            n=c["n"],
            r=c["r"],
            p=c["p"],
            dklen=c["dkLen"],
        ).hex()
        for c in CASES
    ]
    assert got == expected
    # RFC 7914, section 12, third vector.
    assert got[0].startswith("fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162")


@pytest.mark.django_db(transaction=True)
def test_a_proof_solved_by_the_script_is_accepted(room_redis, settings):
    no_limits(settings)
    room = protect(small_flight(), opens_at=timezone.now() + timedelta(hours=1))
    WaitingRoom.objects.filter(pk=room.pk).update(require_proof_of_work=True)
    room.refresh_from_db()
    (customer,) = make_customers(1)
    issued = proof_of_work.issue_challenge(room=room, customer=customer, address="192.0.2.5")
    assert issued.scrypt == {"n": 1024, "r": 8, "p": 1, "dkLen": 32}  # the production cost
    solved = run_node({"hashes": [], "solve": issued.wire()})["solved"]
    entry = joining.join_queue(
        room_id=room.pk, customer=customer, proof=(issued.challenge, solved["solution"])
    )
    assert entry.pk and solved["tries"] == int(solved["solution"]) + 1
