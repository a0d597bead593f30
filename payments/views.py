"""The sandbox provider's hosted checkout page.  It stands in for the provider's own site, so it
needs no Seatkeeper login: the unguessable charge id in the URL is the capability."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views import View

from payments.gateways import sandbox
from payments.models import Payment, SandboxCharge, SandboxChargeStatus

TEST_CARDS = [
    (sandbox.APPROVED_CARD, "approved"),
    *((number, code.replace("_", " ")) for number, code in sandbox.DECLINING_CARDS.items()),
]


class SandboxCheckoutView(View):
    template_name = "payments/sandbox_checkout.html"

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
            messages.error(request, "Choose Pay or Decline.")
            return self._render(request, charge, status=400)
        if action == "approve" and not card_number:
            messages.error(request, "Enter a card number (see the test cards below).")
            return self._render(request, charge, status=400)
        if charge.status != SandboxChargeStatus.REQUIRES_ACTION:
            messages.info(request, "This checkout was already completed.")
            return redirect("payments:sandbox-checkout", charge_id=charge.pk)
        charge = sandbox.complete_checkout(
            charge_id=charge.pk, card_number=card_number, approve=action == "approve"
        )
        if charge.status == SandboxChargeStatus.SUCCEEDED:
            messages.success(request, "Payment approved. Your booking is confirmed in a moment.")
        else:
            messages.error(request, f"Payment declined ({charge.decline_code.replace('_', ' ')}).")
        return redirect("payments:sandbox-checkout", charge_id=charge.pk)
