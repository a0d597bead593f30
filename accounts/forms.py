from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.selectors import email_taken


class SignupForm(UserCreationForm):
    """Username, e-mail (required: confirmations, waitlist offers and expiry warnings go
    there; one account per address, whatever its case) and the password twice."""

    email = forms.EmailField(
        label=_("E-mail address"),
        max_length=254,
        help_text=_("We send your confirmations and tickets here, and a link to verify it."),
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    field_order = ["username", "email", "password1", "password2"]

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def clean_email(self) -> str:
        email = User.objects.normalize_email(self.cleaned_data["email"].strip())
        if email_taken(email):
            raise forms.ValidationError(
                gettext("An account with this e-mail address exists already."), code="taken"
            )
        return email


class VerificationLinkForm(forms.Form):
    email = forms.EmailField(
        label=_("E-mail address"),
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
