"""Offline gates on the server: open one (its bundle), and sync its scans.

**The skew rule.**  A gate's clock is measured at every download and sync: it sends its own
reading (`gateTime`), and its offset is that minus our clock at arrival.  A scan at gate time
`g` between the previous measurement (`g0`, offset `o0`) and this sync's (`g1`, `o1`) is put
on our clock at `g - o(g)`, `o` interpolated linearly from `o0` to `o1` (a clock that drifts
steadily is corrected exactly; one that jumped is corrected by its later offset from the
jump on at worst).  Of all admissions of one ticket, the earliest on our clock wins; the
others are flagged DUPLICATE (ties: the lower device id, then local id).  An admission at or
after the ticket's revocation (or its key's replacement) is flagged REVOKED (SUPERSEDED):
the window the docs describe.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from bookings.gate_codes import b64, raw_public_key, static_code_digest
from bookings.gate_errors import GateDeviceNotFound
from bookings.gate_keys import sale_public_keys, skew_steps, step_seconds
from bookings.models import (
    BookingStatus,
    GateDevice,
    GateScan,
    Sale,
    SaleKind,
    ScanFlag,
    Ticket,
    TicketCredential,
    TicketStatus,
)

ADMITTED = "valid"  # the gate outcome that let someone in
WRONG_SALE = {SaleKind.FLIGHT: "wrong_flight", SaleKind.EVENT: "wrong_event"}


def _offset_ms(gate_time: datetime, now: datetime) -> int:
    return round((gate_time - now).total_seconds() * 1000)


def open_gate(
    *, sale_id: int, name: str, operator: AbstractBaseUser, gate_time: datetime
) -> GateDevice:
    """Register a gate device for a sale, measuring its clock; its bundle is `gate_bundle`."""
    now = timezone.now()
    with transaction.atomic():
        return GateDevice.objects.create(
            sale_id=sale_id,
            name=name,
            operator=operator,
            created_at=now,
            clock_gate_at=gate_time,
            clock_offset_ms=_offset_ms(gate_time, now),
        )


def gate_bundle(*, device: GateDevice) -> dict:
    """Everything a gate needs offline, and nothing that signs: the sale's public keys, the
    step and window, the gate's clock offset, the serials revoked or already used, replaced
    certificates, and digests of the printed codes (so a printed code is recognised, never
    recoverable).  Keys in snake_case: the API renders them camelCase."""
    sale = Sale.objects.get(pk=device.sale_id)
    tickets = Ticket.objects.filter(sale_id=device.sale_id)
    revoked = tickets.filter(
        Q(status=TicketStatus.REVOKED) | ~Q(booking__status=BookingStatus.CONFIRMED)
    ).exclude(status=TicketStatus.USED)
    printed = {
        static_code_digest(t.code): {
            "serial": t.serial,
            "seat": t.seat_no,
            "fare_class": t.fare_class,
            "holder": t.passenger_name,
        }
        for t in tickets.only("code", "serial", "seat_no", "fare_class", "passenger_name")
    }
    return {
        "sale_id": device.sale_id,
        "wrong_sale": WRONG_SALE.get(sale.kind, "wrong_flight"),
        "keys": {k: b64(raw_public_key(v)) for k, v in sale_public_keys(device.sale_id).items()},
        "step_seconds": step_seconds(),
        "skew_steps": skew_steps(),
        "clock_offset_ms": device.clock_offset_ms,
        "server_time": timezone.now(),
        "revoked_serials": sorted(revoked.values_list("serial", flat=True)),
        "used_serials": sorted(
            tickets.filter(status=TicketStatus.USED).values_list("serial", flat=True)
        ),
        "superseded_certs": sorted(
            TicketCredential.objects.filter(
                sale_id=device.sale_id, superseded_at__isnull=False
            ).values_list("cert_id", flat=True)
        ),
        "static_codes": printed,
    }


def access_gate(*, device_id: int) -> GateDevice:
    device = GateDevice.objects.filter(pk=device_id).first()
    if device is None:
        raise GateDeviceNotFound()
    return device


@dataclass(frozen=True)
class ScanReport:
    """One scan as the gate reports it."""

    local_id: str
    serial: str
    cert_id: str
    outcome: str
    scanned_at: datetime  # the gate's clock


def on_server_clock(
    gate_at: datetime, *, before: tuple[datetime, int], after: tuple[datetime, int]
) -> datetime:
    """`gate_at` (the gate's clock) on ours: the skew rule of the module docstring."""
    (g0, o0), (g1, o1) = before, after
    span = (g1 - g0).total_seconds()
    share = 1.0 if span <= 0 else min(max((gate_at - g0).total_seconds() / span, 0.0), 1.0)
    return gate_at - timedelta(milliseconds=o0 + share * (o1 - o0))


def sync_gate_scans(
    *, device_id: int, gate_time: datetime, scans: list[ScanReport]
) -> tuple[GateDevice, list[GateScan]]:
    """Record a gate's scans (a resent scan, same local id, is recorded once), put them on
    our clock, decide which admission of each ticket came first, mark tickets used, and
    measure the gate's clock anew.  Returns the device and the rows of `scans`."""
    now = timezone.now()
    with transaction.atomic():
        device = GateDevice.objects.select_for_update().filter(pk=device_id).first()
        if device is None:
            raise GateDeviceNotFound()
        before = (device.clock_gate_at, device.clock_offset_ms)
        after = (gate_time, _offset_ms(gate_time, now))
        serials = {s.serial for s in scans if s.serial}
        tickets = {
            t.serial: t for t in Ticket.objects.filter(sale_id=device.sale_id, serial__in=serials)
        }
        GateScan.objects.bulk_create(
            [
                GateScan(
                    sale_id=device.sale_id,
                    device=device,
                    local_id=s.local_id,
                    ticket=tickets.get(s.serial),
                    serial=s.serial,
                    cert_id=s.cert_id,
                    gate_outcome=s.outcome,
                    scanned_at_gate=s.scanned_at,
                    scanned_at=on_server_clock(s.scanned_at, before=before, after=after),
                    received_at=now,
                    flag=ScanFlag.UNKNOWN if s.serial and s.serial not in tickets else "",
                )
                for s in scans
            ],
            ignore_conflicts=True,
        )
        admitted = {s.serial for s in scans if s.outcome == ADMITTED and s.serial in tickets}
        for ticket in lock_tickets([tickets[s].pk for s in admitted]):
            _settle_admissions(ticket, operator_id=device.operator_id)
        device.clock_gate_at, device.clock_offset_ms = after
        device.synced_at = now
        device.save(update_fields=["clock_gate_at", "clock_offset_ms", "synced_at"])
        rows = {
            r.local_id: r
            for r in GateScan.objects.filter(
                sale_id=device.sale_id, device=device, local_id__in=[s.local_id for s in scans]
            )
        }
        return device, [rows[s.local_id] for s in scans]


def lock_tickets(ticket_ids: list[int]) -> list[Ticket]:
    """The tickets, row-locked by id (so two syncs settling the same tickets cannot
    deadlock).  The lock is what makes two gates syncing the same ticket at once settle one
    after the other: the second reads the first's admissions, committed, and flags one of
    the two (tests/bookings/test_gate_sync_race.py, with its control)."""
    return list(Ticket.objects.select_for_update().filter(pk__in=ticket_ids).order_by("pk"))


def _settle_admissions(ticket: Ticket, *, operator_id: int) -> None:
    """Flag every gate admission of `ticket` but the first on our clock, and mark the ticket
    used at that moment.  Run again at every sync: a gate that syncs late with an earlier
    admission takes the win from one already recorded."""
    admissions = list(
        GateScan.objects.filter(
            sale_id=ticket.sale_id, ticket=ticket, gate_outcome=ADMITTED
        ).order_by("scanned_at", "device_id", "local_id")
    )
    replaced = dict(
        TicketCredential.objects.filter(
            sale_id=ticket.sale_id, ticket=ticket, superseded_at__isnull=False
        ).values_list("cert_id", "superseded_at")
    )
    # A use that no gate scan explains was an online scan (`scan_ticket`) at that moment.
    online_use = ticket.used_at if ticket.status == TicketStatus.USED else None
    if online_use in {a.scanned_at for a in admissions}:
        online_use = None
    first = None
    for admission in admissions:
        if ticket.revoked_at is not None and admission.scanned_at >= ticket.revoked_at:
            flag = ScanFlag.REVOKED
        elif admission.cert_id in replaced and admission.scanned_at >= replaced[admission.cert_id]:
            flag = ScanFlag.SUPERSEDED
        elif first is not None or (online_use is not None and online_use <= admission.scanned_at):
            flag = ScanFlag.DUPLICATE
        else:
            first, flag = admission, ScanFlag.NONE
        if admission.flag != flag:
            GateScan.objects.filter(pk=admission.pk).update(flag=flag)
    if first is None:
        return
    if ticket.status == TicketStatus.VALID:
        Ticket.objects.filter(pk=ticket.pk, status=TicketStatus.VALID).update(
            status=TicketStatus.USED, used_at=first.scanned_at, used_by_id=operator_id
        )
    elif ticket.status == TicketStatus.USED and ticket.used_at > first.scanned_at:
        Ticket.objects.filter(pk=ticket.pk).update(used_at=first.scanned_at, used_by_id=operator_id)
