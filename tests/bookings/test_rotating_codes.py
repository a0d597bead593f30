"""Rotating ticket codes (issue 29): a time step signed with the ticket's own Ed25519 key, the
key certified by the sale's key.  The server's gate and an offline gate share the verifier."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bookings.gate_codes import (
    Certificate,
    raw_public_key,
    rotating_code,
    sign_certificate,
    step_at,
)
from bookings.gate_keys import certify_ticket_key, sale_signing_key, server_signed_code
from bookings.models import KeyOrigin, TicketCredential, TicketStatus
from bookings.tickets import ScanOutcome, scan_ticket
from tests.bookings.confirming import cancel_confirmed
from tests.bookings.test_checkin import relay, ticketed

pytestmark = pytest.mark.django_db
STEP = 15


def device_key(ticket):
    """A key pair as a phone makes it, certified by the server."""
    key = Ed25519PrivateKey.generate()
    credential, created = certify_ticket_key(
        ticket=ticket, public_key=raw_public_key(key.public_key())
    )
    assert created and credential.origin == KeyOrigin.DEVICE
    return key, credential


def at_step(step: int) -> datetime:
    """A moment in the middle of `step`."""
    return datetime.fromtimestamp(step * STEP + 7, tz=UTC)


def test_a_code_of_the_current_step_gets_in_once(customer, staff_user, flight):
    _, (ticket, _) = ticketed(customer, flight)
    key, credential = device_key(ticket)
    step = step_at(time.time())
    code = rotating_code(credential.certificate, step, key)

    first = scan_ticket(code=code, sale_id=flight.sale_id, scanned_by=staff_user)
    again = scan_ticket(
        code=rotating_code(credential.certificate, step, key),
        sale_id=flight.sale_id,
        scanned_by=staff_user,
    )

    assert (first.outcome, again.outcome) == (ScanOutcome.VALID, ScanOutcome.ALREADY_USED)
    ticket.refresh_from_db()
    assert ticket.status == TicketStatus.USED


@pytest.mark.parametrize(
    ("gate_step_minus_code_step", "outcome"),
    [
        (-1, ScanOutcome.VALID),  # the phone's clock a little ahead
        (0, ScanOutcome.VALID),
        (1, ScanOutcome.VALID),  # the window: one step either side
        (2, ScanOutcome.EXPIRED_CODE),  # a screenshot half a minute old
        (40, ScanOutcome.EXPIRED_CODE),
        (-2, ScanOutcome.EXPIRED_CODE),
    ],
)
def test_rotation_an_old_step_is_refused_and_the_skew_window_accepted(
    customer, staff_user, flight, gate_step_minus_code_step, outcome
):
    _, (ticket, _) = ticketed(customer, flight)
    key, credential = device_key(ticket)
    code_step = step_at(time.time())
    code = rotating_code(credential.certificate, code_step, key)

    result = scan_ticket(
        code=code,
        sale_id=flight.sale_id,
        scanned_by=staff_user,
        now=at_step(code_step + gate_step_minus_code_step),
    )

    assert result.outcome == outcome
    ticket.refresh_from_db()
    assert ticket.status == (TicketStatus.USED if outcome == "valid" else TicketStatus.VALID)


def test_a_certificate_signed_by_another_key_is_forged(customer, staff_user, flight):
    """Someone who has the code format but not the sale's key certifies their own key."""
    _, (ticket, _) = ticketed(customer, flight)
    _, credential = device_key(ticket)  # the real certificate exists; the forger copies it
    forger_key = Ed25519PrivateKey.generate()
    forged_cert = sign_certificate(
        Certificate(
            key_id="k1",
            cert_id=credential.cert_id,
            sale_id=flight.sale_id,
            serial=ticket.serial,
            public_key=raw_public_key(forger_key.public_key()),
            seat_no=ticket.seat_no,
            fare_class=ticket.fare_class,
            holder=ticket.passenger_name,
        ),
        Ed25519PrivateKey.generate(),  # not the sale's key
    )
    step = step_at(time.time())

    forged = scan_ticket(
        code=rotating_code(forged_cert, step, forger_key),
        sale_id=flight.sale_id,
        scanned_by=staff_user,
    )

    assert forged.outcome == ScanOutcome.FORGED
    ticket.refresh_from_db()
    assert ticket.status == TicketStatus.VALID
    # Control: the same certificate signed by the sale's key gets in.
    genuine_cert = sign_certificate(
        Certificate(
            key_id="k1",
            cert_id=credential.cert_id,
            sale_id=flight.sale_id,
            serial=ticket.serial,
            public_key=raw_public_key(forger_key.public_key()),
            seat_no=ticket.seat_no,
            fare_class=ticket.fare_class,
            holder=ticket.passenger_name,
        ),
        sale_signing_key(flight.sale_id),
    )
    assert (
        scan_ticket(
            code=rotating_code(genuine_cert, step, forger_key),
            sale_id=flight.sale_id,
            scanned_by=staff_user,
        ).outcome
        == ScanOutcome.VALID
    )


def test_a_genuine_certificate_with_a_step_signed_by_another_key_is_forged(
    customer, staff_user, flight
):
    """Having the certificate (it is in every code shown) does not let anyone sign steps."""
    _, (ticket, _) = ticketed(customer, flight)
    _, credential = device_key(ticket)
    step = step_at(time.time())
    code = rotating_code(credential.certificate, step, Ed25519PrivateKey.generate())

    assert (
        scan_ticket(code=code, sale_id=flight.sale_id, scanned_by=staff_user).outcome
        == ScanOutcome.FORGED
    )


def test_a_tampered_certificate_is_forged(customer, staff_user, flight):
    _, (ticket, _) = ticketed(customer, flight)
    key, credential = device_key(ticket)
    body, signature = credential.certificate.split(".")
    flipped = body[:10] + ("A" if body[10] != "A" else "B") + body[11:]
    step = step_at(time.time())

    code = rotating_code(f"{flipped}.{signature}", step, key)

    assert (
        scan_ticket(code=code, sale_id=flight.sale_id, scanned_by=staff_user).outcome
        == ScanOutcome.FORGED
    )


def test_a_new_phone_replaces_the_old_key(customer, staff_user, flight):
    _, (ticket, _) = ticketed(customer, flight)
    old_key, old = device_key(ticket)
    new_key, new = device_key(ticket)
    step = step_at(time.time())

    old_scan = scan_ticket(
        code=rotating_code(old.certificate, step, old_key),
        sale_id=flight.sale_id,
        scanned_by=staff_user,
    )
    assert old_scan.outcome == ScanOutcome.SUPERSEDED
    assert TicketCredential.objects.get(pk=old.pk).superseded_at is not None
    assert (
        scan_ticket(
            code=rotating_code(new.certificate, step, new_key),
            sale_id=flight.sale_id,
            scanned_by=staff_user,
        ).outcome
        == ScanOutcome.VALID
    )


def test_sending_the_current_key_again_changes_nothing(customer, flight):
    _, (ticket, _) = ticketed(customer, flight)
    key, credential = device_key(ticket)

    again, created = certify_ticket_key(ticket=ticket, public_key=raw_public_key(key.public_key()))

    assert (again.pk, created) == (credential.pk, False)


def test_the_server_signs_for_a_page_without_ed25519(customer, staff_user, flight):
    _, (ticket, _) = ticketed(customer, flight)
    credential, _ = certify_ticket_key(ticket=ticket, public_key=None)
    now = time.time()

    code, step = server_signed_code(ticket=ticket, now=now)
    later, later_step = server_signed_code(ticket=ticket, now=now + STEP)

    assert credential.origin == KeyOrigin.SERVER and later_step == step + 1 and later != code
    # No private key is stored: the row holds the public key and the certificate only.
    assert {f.name for f in TicketCredential._meta.fields} >= {"public_key", "certificate"}
    assert not any("private" in f.name or "secret" in f.name for f in TicketCredential._meta.fields)
    assert (
        scan_ticket(code=code, sale_id=flight.sale_id, scanned_by=staff_user).outcome
        == ScanOutcome.VALID
    )


def test_a_cancelled_tickets_rotating_code_is_revoked(customer, staff_user, flight):
    booking, (ticket, _) = ticketed(customer, flight)
    key, credential = device_key(ticket)
    cancel_confirmed(booking)
    relay()
    step = step_at(time.time())

    result = scan_ticket(
        code=rotating_code(credential.certificate, step, key),
        sale_id=flight.sale_id,
        scanned_by=staff_user,
    )

    assert result.outcome == ScanOutcome.REVOKED


def test_the_printed_static_code_still_works(customer, staff_user, flight):
    _, (ticket, _) = ticketed(customer, flight)
    device_key(ticket)  # a phone has a live code too; the paper one is still good

    assert ticket.code.startswith("SK1.")
    assert (
        scan_ticket(code=ticket.code, sale_id=flight.sale_id, scanned_by=staff_user).outcome
        == ScanOutcome.VALID
    )


def test_the_pdf_marks_its_code_as_static_for_print(customer, flight, monkeypatch):
    from reportlab.lib.units import mm
    from reportlab.pdfgen.canvas import Canvas

    from bookings import ticket_render

    _, (ticket, _) = ticketed(customer, flight)
    drawn = []
    real = Canvas.drawCentredString
    monkeypatch.setattr(
        Canvas,
        "drawCentredString",
        lambda self, x, y, text, *a, **k: (
            drawn.append((x, y, text)) or real(self, x, y, text, *a, **k)
        ),
    )

    ticket_render.ticket_pdf(ticket)

    ((x, y, text),) = [d for d in drawn if "Static code" in d[2]]
    assert text == "Static code — for print"
    # Centred under the QR code, below it.
    qr_left = ticket_render.PAGE_WIDTH - ticket_render.MARGIN - ticket_render.QR_SIZE
    assert x == qr_left + ticket_render.QR_SIZE / 2
    qr_bottom = ticket_render.PAGE_HEIGHT - 40 * mm - ticket_render.QR_SIZE
    assert 0 < y < qr_bottom
