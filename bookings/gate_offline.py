"""A reference offline gate: download a sale's bundle (public keys, revocation list, digests
of the printed codes), scan with no network, sync the scans later.

No Django and no secret: it verifies rotating codes with `bookings.gate_codes` (the same
verifier the server's gate runs) and the sale's public keys, and printed codes by their
digests.  Its clock is its own; the bundle says how far it was from the server's when it was
downloaded (`clockOffsetMs`), and the gate corrects by that before choosing the time step.

As a program (state kept in a JSON file; the token is a gate operator's API token):

    python -m bookings.gate_offline --state gate.json download --server URL --token T \\
        --event-id 7 --name "North door"
    python -m bookings.gate_offline --state gate.json scan 'SKR1....'
    python -m bookings.gate_offline --state gate.json sync --server URL --token T
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from bookings.gate_codes import (
    BadGateCode,
    StaleGateCode,
    is_rotating_code,
    public_key_from_raw,
    static_code_digest,
    unb64,
    verify_rotating_code,
)


def iso(unix_time: float) -> str:
    return datetime.fromtimestamp(unix_time, UTC).isoformat(timespec="milliseconds")


@dataclass
class Bundle:
    """What a gate downloads (`GET`/`POST /api/gates...` answers `bundle`)."""

    sale_id: int
    keys: dict[str, Ed25519PublicKey]
    step_seconds: int
    skew_steps: int
    clock_offset_ms: int  # the gate's clock minus the server's, measured at download
    wrong_sale: str
    revoked: set[str]
    superseded: set[str]
    used: set[str]
    static_codes: dict[str, dict]

    @classmethod
    def from_json(cls, data: dict) -> Bundle:
        return cls(
            sale_id=int(data["saleId"]),
            keys={k: public_key_from_raw(unb64(v)) for k, v in data["keys"].items()},
            step_seconds=int(data["stepSeconds"]),
            skew_steps=int(data["skewSteps"]),
            clock_offset_ms=int(data["clockOffsetMs"]),
            wrong_sale=data["wrongSale"],
            revoked=set(data["revokedSerials"]),
            superseded=set(data["supersededCerts"]),
            used=set(data["usedSerials"]),
            static_codes=dict(data["staticCodes"]),
        )


@dataclass(frozen=True)
class Verdict:
    outcome: str  # the server's ScanOutcome values: valid, forged, revoked, ...
    serial: str = ""
    holder: str = ""
    seat: str = ""
    cert_id: str = ""  # rotating codes: which certified key showed it


@dataclass
class OfflineGate:
    bundle: Bundle
    device_id: int
    clock: Callable[[], float] = time.time
    scans: list[dict] = field(default_factory=list)
    synced: int = 0  # scans[:synced] are on the server
    admitted: set[str] = field(default_factory=set)

    def server_now(self) -> float:
        """The server's time as this gate believes it: its own clock, corrected."""
        return self.clock() - self.bundle.clock_offset_ms / 1000

    def scan(self, code: str) -> Verdict:
        verdict = self._verdict(code.strip())
        if verdict.outcome == "valid":
            self.admitted.add(verdict.serial)
        self.scans.append(
            {
                "localId": uuid.uuid4().hex,
                "serial": verdict.serial,
                "certId": verdict.cert_id,
                "outcome": verdict.outcome,
                "scannedAt": iso(self.clock()),  # the gate's own clock: the server corrects it
            }
        )
        return verdict

    def _verdict(self, code: str) -> Verdict:
        bundle = self.bundle
        if is_rotating_code(code):
            try:
                verified = verify_rotating_code(
                    code,
                    sale_keys=bundle.keys,
                    now=self.server_now(),
                    skew_steps=bundle.skew_steps,
                    step_seconds=bundle.step_seconds,
                )
            except StaleGateCode:
                return Verdict("expired_code")
            except BadGateCode:  # forged, or certified for another sale (another key)
                return Verdict("forged")
            cert = verified.certificate
            if cert.sale_id != bundle.sale_id:
                return Verdict(bundle.wrong_sale, cert.serial)
            found = Verdict("valid", cert.serial, cert.holder, cert.seat_no, cert.cert_id)
            if cert.cert_id in bundle.superseded:
                return Verdict("superseded", cert.serial, cert_id=cert.cert_id)
        else:
            printed = bundle.static_codes.get(static_code_digest(code))
            if printed is None:
                return Verdict("forged")
            found = Verdict("valid", printed["serial"], printed["holder"], printed["seat"])
        if found.serial in bundle.revoked:
            return Verdict("revoked", found.serial, cert_id=found.cert_id)
        if found.serial in bundle.used or found.serial in self.admitted:
            return Verdict("already_used", found.serial, cert_id=found.cert_id)
        return found

    # --- sync ---------------------------------------------------------------------------------

    def sync_request(self) -> dict:
        return {"gateTime": iso(self.clock()), "scans": self.scans[self.synced :]}

    def apply_sync(self, answer: dict, *, sent: int) -> list[dict]:
        """Take the server's answer to a sync of `sent` scans: the fresh bundle (revocations
        since the last one) replaces the old; returns the server's flags of those scans."""
        self.synced += sent
        self.bundle = Bundle.from_json(answer["bundle"])
        return answer["scans"]

    # --- state file (the program) -------------------------------------------------------------

    def save(self, path: Path, raw_bundle: dict) -> None:
        state = {
            "deviceId": self.device_id,
            "bundle": raw_bundle,
            "scans": self.scans,
            "synced": self.synced,
            "admitted": sorted(self.admitted),
        }
        path.write_text(json.dumps(state, indent=1))

    @classmethod
    def load(cls, path: Path) -> tuple[OfflineGate, dict]:
        state = json.loads(path.read_text())
        gate = cls(Bundle.from_json(state["bundle"]), device_id=state["deviceId"])
        gate.scans, gate.synced = state["scans"], state["synced"]
        gate.admitted = set(state["admitted"])
        return gate, state["bundle"]


def _post(server: str, path: str, token: str, body: dict) -> dict:
    request = urllib.request.Request(
        server.rstrip("/") + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--state", type=Path, required=True)
    commands = parser.add_subparsers(dest="command", required=True)
    download = commands.add_parser("download")
    download.add_argument("--server", required=True)
    download.add_argument("--token", required=True)
    which = download.add_mutually_exclusive_group(required=True)
    which.add_argument("--event-id", type=int)
    which.add_argument("--flight-id", type=int)
    download.add_argument("--name", required=True)
    scan = commands.add_parser("scan")
    scan.add_argument("code")
    sync = commands.add_parser("sync")
    sync.add_argument("--server", required=True)
    sync.add_argument("--token", required=True)
    args = parser.parse_args(argv)

    if args.command == "download":
        ref = {"eventId": args.event_id} if args.event_id else {"flightId": args.flight_id}
        body = {**ref, "name": args.name, "gateTime": iso(time.time())}
        answer = _post(args.server, "/api/gates", args.token, body)
        gate = OfflineGate(Bundle.from_json(answer["bundle"]), device_id=answer["deviceId"])
        gate.save(args.state, answer["bundle"])
        print(f"gate {gate.device_id} ready, clock offset {gate.bundle.clock_offset_ms} ms")
        return 0
    gate, raw = OfflineGate.load(args.state)
    if args.command == "scan":
        verdict = gate.scan(args.code)
        gate.save(args.state, raw)
        print(json.dumps(verdict.__dict__))
        return 0 if verdict.outcome == "valid" else 1
    request = gate.sync_request()
    answer = _post(args.server, f"/api/gates/{gate.device_id}/scans", args.token, request)
    flags = gate.apply_sync(answer, sent=len(request["scans"]))
    gate.save(args.state, answer["bundle"])
    print(json.dumps(flags, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
