from django import forms

from kernel.idempotency import MAX_KEY_LENGTH


class PayForm(forms.Form):
    """The hold page's Pay button.  The key is minted when the page is drawn, so pressing Pay
    twice (or the browser resending the POST) is one payment, not two."""

    idempotency_key = forms.CharField(min_length=16, max_length=MAX_KEY_LENGTH)


class CancelForm(forms.Form):
    """The cancellation step: the refund the customer was shown, so a changed quote is not
    applied behind their back."""

    quoted_refund = forms.DecimalField(max_digits=12, decimal_places=2, min_value=0)
