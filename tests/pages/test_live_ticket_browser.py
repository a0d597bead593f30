"""The ticket page's live code in headless Chromium: a key made in the browser (WebCrypto
Ed25519), certified by the server, a new code every time step drawn by qr.js, at phone and
desktop width, with axe; and the server-signed fallback for a browser without Ed25519."""

from __future__ import annotations

import io
import json
import random
import string
import time
from pathlib import Path

import pytest
import qrcode
import zxingcpp
from PIL import Image
from playwright.sync_api import expect
from qrcode.util import MODE_8BIT_BYTE, QRData

from bookings.gate_codes import STEP_SECONDS, StaleGateCode, step_at
from bookings.gate_keys import verify_code_on_server
from bookings.models import KeyOrigin, TicketCredential
from tests.bookings.confirming import hold_and_confirm
from tests.bookings.test_checkin import relay
from tests.factories import FlightFactory, UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page, off_loop

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(180),
]

QR_JS = Path(__file__).resolve().parents[2] / "static" / "js" / "qr.js"
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1366, "height": 900}}
LIVE = "[data-live-code][data-code]"
NO_ED25519 = """(() => {
  const generate = crypto.subtle.generateKey.bind(crypto.subtle);
  crypto.subtle.generateKey = (algorithm, ...rest) =>
    (algorithm && (algorithm === "Ed25519" || algorithm.name === "Ed25519"))
      ? Promise.reject(new DOMException("not supported", "NotSupportedError"))
      : generate(algorithm, ...rest);
})();"""


def booking_with_tickets(customer):
    flight = FlightFactory()
    booking = off_loop(hold_and_confirm, customer, flight)
    off_loop(relay)
    return booking


def decoded(page, selector: str) -> str:
    """What a phone camera would read off the drawn code."""
    png = page.locator(selector).screenshot()
    results = zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))
    assert results, "no QR code found in the drawing"
    return results[0].text


def pause_mid_step(page) -> int:
    """Stops the page's clock in the middle of the next step, once every code shows it.

    A running clock can cross a step boundary between reading a code and screenshotting its
    drawing (CI once drew the next step's code); a paused one moves only when the test says."""
    step = page.evaluate("Date.now()") // (STEP_SECONDS * 1000) + 1
    page.clock.pause_at((step + 0.5) * STEP_SECONDS)  # Python's Playwright takes seconds here
    every_code_shows(page, step)
    return step


def every_code_shows(page, step: int) -> None:
    page.wait_for_function(
        "step => [...document.querySelectorAll('[data-live-code]')]"
        ".every(e => e.dataset.step === step)",
        arg=str(step),
    )


def drawn_in_a_still_moment(page) -> tuple[str, dict]:
    """The first code as drawn and as the page holds it, read with no new step in between.

    The page redraws and sets its data in one go, so a drawing taken between two equal
    reads is that code's. The server's clock cannot be paused, so a read that a step
    boundary split is taken again."""
    for _ in range(3):
        shown = live_codes(page)[0]
        drawn = decoded(page, "[data-live-code] .live-code-image >> nth=0")
        if live_codes(page)[0] == shown:
            return drawn, shown
    raise AssertionError("the code changed during each of three reads")


def live_codes(page) -> list[dict]:
    return page.eval_on_selector_all(
        "[data-live-code]", "els => els.map(e => ({code: e.dataset.code, step: e.dataset.step}))"
    )


@pytest.mark.parametrize("width", list(VIEWPORTS))
def test_the_ticket_page_shows_a_code_that_changes_every_step(browser, asgi_server, width):
    customer = UserFactory(username=f"phone-{width}")
    booking = booking_with_tickets(customer)
    page = logged_in_page(browser, asgi_server, customer, viewport=VIEWPORTS[width])
    page.set_default_timeout(20_000)
    page.clock.install()

    page.goto(f"{asgi_server.url}/bookings/{booking.pk}/")
    expect(page.locator(LIVE)).to_have_count(2)
    step = pause_mid_step(page)
    before = live_codes(page)
    assert [int(code["step"]) for code in before] == [step, step]
    first = before[0]["code"]
    assert decoded(page, "[data-live-code] .live-code-image >> nth=0") == first
    # Made on this device: the server has its public key only, and it verifies.
    assert set(TicketCredential.objects.values_list("origin", flat=True)) == {KeyOrigin.DEVICE}
    verified = verify_code_on_server(first, now=step * STEP_SECONDS + 1)
    assert verified.certificate.serial in {t.serial for t in booking.tickets.all()}
    expect(page.locator(".live-code-state").first).to_contain_text("changes every 15 seconds")
    assert page.locator(".static-code summary").first.inner_text() == "Static code — for print"
    shot(page, f"30-live-ticket-{width}")
    page.clock.resume()  # axe waits on timers of its own
    assert_no_serious_axe_violations(page)

    later = pause_mid_step(page)  # the clock jumps on to the middle of a later step
    after = live_codes(page)
    assert later > step
    assert after[0]["code"] != first and after[1]["code"] != before[1]["code"]
    # What is drawn is the code of the moment.
    assert decoded(page, "[data-live-code] .live-code-image >> nth=0") == after[0]["code"]
    # The screenshot taken before is refused once its step is out of the window.
    with pytest.raises(StaleGateCode):
        verify_code_on_server(first, now=(step + 2) * STEP_SECONDS + 1)
    page.clock.resume()
    assert_no_serious_axe_violations(page)


def test_the_key_stays_on_the_device_across_visits(browser, asgi_server):
    customer = UserFactory(username="returning")
    booking = booking_with_tickets(customer)
    page = logged_in_page(browser, asgi_server, customer, viewport=VIEWPORTS["phone"])
    page.set_default_timeout(20_000)

    page.goto(f"{asgi_server.url}/bookings/{booking.pk}/")
    expect(page.locator(LIVE)).to_have_count(2)
    page.reload()
    expect(page.locator(LIVE)).to_have_count(2)

    # The same key came back from IndexedDB: no new certificate, nothing superseded.
    assert TicketCredential.objects.count() == 2
    assert not TicketCredential.objects.filter(superseded_at__isnull=False).exists()


def test_without_ed25519_the_server_signs_for_the_page(browser, asgi_server):
    customer = UserFactory(username="old-browser")
    booking = booking_with_tickets(customer)
    page = logged_in_page(browser, asgi_server, customer, viewport=VIEWPORTS["phone"])
    page.set_default_timeout(20_000)
    page.add_init_script(NO_ED25519)

    page.goto(f"{asgi_server.url}/bookings/{booking.pk}/")
    expect(page.locator(LIVE)).to_have_count(2)
    drawn, before = drawn_in_a_still_moment(page)

    assert set(TicketCredential.objects.values_list("origin", flat=True)) == {KeyOrigin.SERVER}
    assert drawn == before["code"]
    assert_no_serious_axe_violations(page)
    # The server's clock moves on; the page fetches the next step's code.
    page.wait_for_function(
        "step => document.querySelector('[data-live-code]').dataset.step !== step",
        arg=before["step"],
        timeout=25_000,
    )
    assert live_codes(page)[0]["code"] != before["code"]
    assert int(live_codes(page)[0]["step"]) == step_at(time.time())


def test_qr_js_draws_the_same_modules_as_the_python_qrcode_package(browser):
    """qr.js against an independent encoder: same version, and with its chosen mask, the
    same modules, for texts from 1 to 2,000 bytes (versions 1 to 38)."""
    rng = random.Random(29)
    alphabet = string.ascii_letters + string.digits + "-_."
    texts = ["".join(rng.choice(alphabet) for _ in range(n)) for n in (1, 14, 15, 100, 395, 2000)]
    page = browser.new_page()
    page.add_script_tag(path=str(QR_JS))

    drawn = page.evaluate(
        "texts => texts.map(t => { const q = SeatkeeperQR.encode(t);"
        " return {version: q.version, mask: q.mask, modules: q.modules}; })",
        texts,
    )

    for text, ours in zip(texts, drawn, strict=True):
        fitted = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M)
        fitted.add_data(QRData(text.encode(), mode=MODE_8BIT_BYTE))
        fitted.make(fit=True)
        theirs = qrcode.QRCode(
            version=ours["version"],
            error_correction=qrcode.constants.ERROR_CORRECT_M,
            border=0,
            mask_pattern=ours["mask"],
        )
        theirs.add_data(QRData(text.encode(), mode=MODE_8BIT_BYTE))
        theirs.make(fit=False)
        assert ours["version"] == fitted.version, len(text)
        assert ours["modules"] == theirs.get_matrix(), (len(text), json.dumps(ours["mask"]))
