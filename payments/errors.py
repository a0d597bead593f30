"""Payment problems, as DomainErrors so the API answers problem+json and pages show the text."""

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from kernel.errors import DomainError


class PaymentInProgress(DomainError):
    status = 409
    code = "payment-in-progress"
    title = _("This booking already has a payment")


class PaymentMethodRefused(DomainError):
    status = 400
    code = "payment-method-refused"
    title = _("This payment method is not accepted")


class AmountMismatch(DomainError):
    status = 400
    code = "amount-mismatch"
    title = _("Amount does not match the booking")


class BookingNotPayable(DomainError):
    status = 409
    code = "booking-not-payable"
    title = _("This booking cannot be paid")


class BookingAlreadyCancelled(DomainError):
    status = 409
    code = "booking-already-cancelled"
    title = _("Booking already cancelled")


class CancellationRefused(DomainError):
    status = 409
    code = "cancellation-refused"
    title = _("This booking can no longer be cancelled")


class GoodwillRefundNotAllowed(DomainError):
    status = 403
    code = "goodwill-refund-not-allowed"
    title = _("Goodwill refunds need their own permission")

    def __init__(self) -> None:
        super().__init__(
            gettext(
                "Only staff with the permission to grant goodwill refunds can refund in full "
                "against the policy. Nothing was cancelled."
            )
        )


class WebhookSignatureInvalid(DomainError):
    status = 400
    code = "webhook-signature-invalid"
    title = _("Webhook signature invalid")


class WebhookEventRefused(DomainError):
    status = 400
    code = "webhook-event-refused"
    title = _("Webhook event contradicts the gateway's records")


class GatewayNotFound(DomainError):
    status = 404
    code = "gateway-not-found"
    title = _("Unknown payment gateway")


class GatewayError(Exception):
    """The gateway could not be reached or refused the call; the outcome may be unknown."""
