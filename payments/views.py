"""Payment pages.

The customer's side (pay for a hold, cancel a booking with its refund shown first) needs a
login and answers 404 for other people's bookings.  The sandbox provider's hosted checkout
page stands in for the provider's own site, so it needs no Seatkeeper login: the unguessable
charge id in the URL is the capability."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from bookings import catalogue
from bookings.models import Booking
from kernel.errors import DomainError
from languages.formatting import format_money
from payments import selectors
from payments.cancellation import cancel_booking
from payments.errors import PaymentInProgress
from payments.forms import CancelForm, PayForm
from payments.gateways import sandbox, sandbox_enabled
from payments.models import Payment, SandboxCharge, SandboxChargeStatus
from payments.paying import pay_for_booking

# The sandbox's outcomes in words (its decline codes are the real gateways' codes).
SANDBOX_OUTCOMES = {
    "approved": gettext_lazy("approved"),
    "card_declined": gettext_lazy("card declined"),
    "insufficient_funds": gettext_lazy("insufficient funds"),
    "expired_card": gettext_lazy("expired card"),
}
TEST_CARDS = [
    (sandbox.APPROVED_CARD, SANDBOX_OUTCOMES["approved"]),
    *(
        (number, SANDBOX_OUTCOMES.get(code, code.replace("_", " ")))
        for number, code in sandbox.DECLINING_CARDS.items()
    ),
]


@method_decorator(never_cache, name="dispatch")  # Back re-asks: it shows the checkout as it is now
class SandboxCheckoutView(View):
    template_name = "payments/sandbox_checkout.html"

    def dispatch(self, request, *args, **kwargs):
        # The simulated provider's page does not exist beside a real gateway.
        if not sandbox_enabled():
            raise Http404(_("No sandbox checkout here."))
        return super().dispatch(request, *args, **kwargs)

    def _render(self, request, charge, status=200):
        payment = Payment.objects.filter(pk=charge.merchant_reference).only("booking_id").first()
        return render(
            request,
            self.template_name,
            {
                "charge": charge,
                "test_cards": TEST_CARDS,
                "booking_id": payment and payment.booking_id,
                "open": charge.status == SandboxChargeStatus.REQUIRES_ACTION,
                # The merchant's return URL: where the customer goes back after paying.
                "return_url": reverse("bookings:detail", args=[payment.booking_id])
                if payment
                else "/",
            },
            status=status,
        )

    def get(self, request, charge_id: str):
        return self._render(request, get_object_or_404(SandboxCharge, pk=charge_id))

    def post(self, request, charge_id: str):
        charge = get_object_or_404(SandboxCharge, pk=charge_id)
        action = request.POST.get("action")
        card_number = request.POST.get("card_number", "").strip()
        if action not in ("approve", "decline"):
            messages.error(request, _("Choose Pay or Decline."))
            return self._render(request, charge, status=400)
        if action == "approve" and not card_number:
            messages.error(request, _("Enter a card number (see the test cards below)."))
            return self._render(request, charge, status=400)
        if charge.status != SandboxChargeStatus.REQUIRES_ACTION:
            messages.info(request, _("This checkout was already completed."))
            return redirect("payments:sandbox-checkout", charge_id=charge.pk)
        charge = sandbox.complete_checkout(
            charge_id=charge.pk, card_number=card_number, approve=action == "approve"
        )
        if charge.status == SandboxChargeStatus.SUCCEEDED:
            messages.success(request, _("Payment approved. Your booking is confirmed in a moment."))
        else:
            messages.error(
                request,
                _("Payment declined (%(reason)s).")
                % {"reason": SANDBOX_OUTCOMES.get(charge.decline_code, charge.decline_code)},
            )
        return redirect("payments:sandbox-checkout", charge_id=charge.pk)


# --- the customer's side: pay for a hold, cancel a booking -------------------------------------


def _owned_booking(request: HttpRequest, booking_id: int) -> Booking:
    """404 for a booking that is not the customer's: nobody learns that it exists."""
    return get_object_or_404(
        Booking.objects.select_related("sale", *catalogue.owner_paths("sale__")),
        pk=booking_id,
        customer=request.user,
    )


def _show(request: HttpRequest, error: DomainError) -> None:
    messages.error(request, f"{error.title}. {error.detail}")


@require_POST
def checkout(request: HttpRequest, booking_id: int) -> HttpResponse:
    """Start paying for a hold: on to the provider's hosted checkout, back to the booking page."""
    detail = reverse("bookings:detail", args=[booking_id])
    if not request.user.is_authenticated:
        return redirect_to_login(detail)
    booking = _owned_booking(request, booking_id)
    form = PayForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("The payment form was incomplete. Please press Pay again."))
        return redirect(detail)
    try:
        outcome = pay_for_booking(
            customer=request.user,
            booking_id=booking.pk,
            idempotency_key=form.cleaned_data["idempotency_key"],
        )
    except PaymentInProgress:
        messages.info(
            request,
            _(
                "A payment for this booking is already in progress. Finish it at the payment "
                "provider, or decline it there to start again."
            ),
        )
        return redirect(detail)
    except DomainError as error:
        _show(request, error)
        return redirect(detail)
    checkout_url = outcome.body.get("checkoutUrl")
    if outcome.status == 202 and checkout_url:
        return redirect(checkout_url)
    if outcome.status == 201:
        messages.success(request, _("Payment received. Your booking is confirmed."))
    elif outcome.status == 202:
        # Waiting for the customer without a page to send them to (e.g. 3-D Secure through
        # Stripe.js): say so rather than fail; pressing Pay again starts a fresh attempt.
        messages.info(
            request,
            _(
                "The payment provider is waiting for your confirmation. Press Pay again to "
                "start over."
            ),
        )
    else:
        messages.error(request, f"{outcome.body['title']}. {outcome.body['detail']}")
    return redirect(detail)


@require_http_methods(["GET", "POST"])
@login_required
def cancel(request: HttpRequest, booking_id: int) -> HttpResponse:
    """A confirmation step that shows the refund first; the POST cancels and refunds."""
    booking = _owned_booking(request, booking_id)
    quote = selectors.quote_refund(customer=request.user, booking_id=booking.pk)
    if request.method == "POST":
        form = CancelForm(request.POST)
        if not form.is_valid():
            messages.error(request, _("Please confirm the cancellation from this page."))
        elif form.cleaned_data["quoted_refund"] != quote.amount:
            messages.warning(
                request,
                _(
                    "The refund has changed to %(amount)s since you opened this page. Please "
                    "check it and confirm again."
                )
                % {"amount": format_money(quote.amount, quote.currency)},
            )
        else:
            try:
                done = cancel_booking(customer=request.user, booking_id=booking.pk)
            except DomainError as error:
                _show(request, error)
                return redirect("bookings:detail", booking_id=booking.pk)
            if done.refund:
                messages.success(
                    request,
                    _("Booking cancelled. A refund of %(amount)s is on its way to your card.")
                    % {"amount": format_money(done.refund.amount, done.refund.currency)},
                )
            else:
                messages.success(request, _("Booking cancelled.") + " " + str(done.quote.reason))
            return redirect("bookings:detail", booking_id=booking.pk)
    status = 200 if request.method == "GET" else 400
    return render(
        request, "payments/cancel.html", {"booking": booking, "quote": quote}, status=status
    )
