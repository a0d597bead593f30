"""Sign-up, the e-mail verification pages and the password reset's e-mail.  Thin: every
write is a service call; a refusal is a message (and its status) on the page."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from accounts import selectors, services
from accounts.errors import TooManySignups
from accounts.forms import SignupForm, VerificationLinkForm
from kernel.errors import DomainError
from kernel.web.client_ip import client_ip


def _safe_next(request: HttpRequest, fallback: str) -> str:
    """`next` if it is a path of ours, else `fallback`.  Only a path: `redirect()` would
    take any other word for a view name (NoReverseMatch, a 500)."""
    next_url = request.POST.get("next") or request.GET.get("next", "")
    ours = url_has_allowed_host_and_scheme(next_url, {request.get_host()}, request.is_secure())
    if ours and next_url.startswith("/") and next_url.isprintable():
        return next_url
    return fallback


def _refused(request: HttpRequest, error: DomainError, template: str, context: dict):
    messages.error(request, f"{error.title}. {error.detail}")
    response = render(request, template, context, status=error.status)
    if "retryAfter" in error.extra:
        response["Retry-After"] = str(error.extra["retryAfter"])
    return response


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("flights:search")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = services.sign_up(
                username=form.cleaned_data["username"],
                email=form.cleaned_data["email"],
                password=form.cleaned_data["password1"],
                address=client_ip(request) or None,
            )
        except TooManySignups as error:
            return _refused(request, error, "registration/signup.html", {"form": form})
        except DomainError as error:  # the address was taken a moment ago
            form.add_error("email", error.detail)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(
                request,
                _("Welcome, %(name)s! You are signed in. We sent a link to %(email)s to verify it.")
                % {"name": user.get_username(), "email": user.email},
            )
            return redirect(_safe_next(request, reverse("flights:search")))
    return render(request, "registration/signup.html", {"form": form})


@require_http_methods(["GET", "POST"])
@never_cache
@login_required
def verification(request: HttpRequest) -> HttpResponse:
    """Whether your address is verified, and "send me the link" (to it, or to a new one)."""
    form = VerificationLinkForm(request.POST or None, initial={"email": request.user.email})
    context = {
        "form": form,
        "verified": selectors.has_verified_email(request.user),
        "next": _safe_next(request, ""),
    }
    if request.method == "POST" and form.is_valid():
        try:
            email = services.send_verification_link(
                user=request.user, email=form.cleaned_data["email"]
            )
        except DomainError as error:
            return _refused(request, error, "registration/verify_email.html", context)
        hours = int(settings.ACCOUNTS["VERIFICATION_LINK_MAX_AGE"].total_seconds() // 3600)
        messages.success(
            request,
            ngettext(
                "We sent a link to %(email)s. Open it within %(hours)d hour.",
                "We sent a link to %(email)s. Open it within %(hours)d hours.",
                hours,
            )
            % {"email": email, "hours": hours},
        )
        return redirect(context["next"] or reverse("accounts:verification"))
    return render(request, "registration/verify_email.html", context)


@require_GET
def verify(request: HttpRequest, token: str) -> HttpResponse:
    """The link in the e-mail."""
    try:
        user = services.confirm_email(token=token)
    except DomainError as error:
        messages.error(request, f"{error.title}. {error.detail}")
        return render(request, "registration/verify_email_failed.html", status=error.status)
    messages.success(request, _("Thank you: %(email)s is verified.") % {"email": user.email})
    return redirect("accounts:verification" if request.user.is_authenticated else "login")


class PasswordResetView(auth_views.PasswordResetView):
    """Django's password reset, with links to PUBLIC_BASE_URL (not whatever Host the request
    named) and at most ACCOUNTS["PASSWORD_RESETS_PER_ADDRESS"] mails per client address."""

    def form_valid(self, form):
        try:
            services.check_password_reset_budget(address=client_ip(self.request) or None)
        except DomainError as error:
            return _refused(
                self.request, error, self.template_name, self.get_context_data(form=form)
            )
        self.extra_email_context = {"base_url": settings.PUBLIC_BASE_URL.rstrip("/")}
        return super().form_valid(form)
