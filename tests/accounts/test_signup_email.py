"""Sign-up asks for an e-mail address (required, valid, one account per address whatever its
case), sends a signed, expiring verification link, and forgotten passwords can be reset."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.urls import reverse

from accounts import links
from accounts.models import EmailAddress
from accounts.selectors import has_verified_email
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

User = get_user_model()
PASSWORD = "seats-never-twice-42"


def sign_up(client, **fields):
    data = {"username": "traveller", "email": "ana@example.com", "password1": PASSWORD}
    data.update(fields)
    data.setdefault("password2", data["password1"])
    return client.post(reverse("accounts:signup"), data)


def link_in(message) -> str:
    return re.search(r"https?://\S+/accounts/verify-email/\S+/", message.body).group(0)


def test_sign_up_without_an_email_address_is_refused(client):
    response = client.post(
        reverse("accounts:signup"),
        {"username": "traveller", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    assert not User.objects.filter(username="traveller").exists()


@pytest.mark.parametrize("email", ["not-an-address", "ana@", "ana@exa mple.com"])
def test_sign_up_with_an_invalid_email_address_is_refused(client, email):
    response = sign_up(client, email=email)
    assert "Enter a valid email address." in response.content.decode()
    assert not User.objects.filter(username="traveller").exists()


def test_an_address_is_one_account_whatever_its_case(client):
    UserFactory(username="first", email="ana@example.com")
    response = sign_up(client, email="ANA@Example.COM")
    assert "An account with this e-mail address exists already." in response.content.decode()
    assert not User.objects.filter(username="traveller").exists()


def test_the_database_refuses_one_address_twice_in_another_case():
    """The invariant itself, for two sign-ups that both passed the form's check at once."""
    EmailAddress.objects.create(user=UserFactory(), email="ana@example.com")
    with pytest.raises(IntegrityError), transaction.atomic():
        EmailAddress.objects.create(user=UserFactory(), email="Ana@Example.com")
    # Control: another address is fine.
    EmailAddress.objects.create(user=UserFactory(), email="bo@example.com")


def test_sign_up_sends_a_link_that_verifies_the_address(
    client, mailoutbox, settings, django_capture_on_commit_callbacks
):
    settings.PUBLIC_BASE_URL = "https://tickets.example"
    with django_capture_on_commit_callbacks() as callbacks:
        response = sign_up(client)
        assert not mailoutbox  # sent only once the account is committed
    assert response.status_code == 302
    for callback in callbacks:
        callback()
    user = User.objects.get(username="traveller")
    assert user.email == "ana@example.com"
    assert not has_verified_email(user)
    assert len(mailoutbox) == 1 and mailoutbox[0].to == ["ana@example.com"]
    link = link_in(mailoutbox[0])
    assert link.startswith("https://tickets.example/accounts/verify-email/")

    opened = client.get(link.removeprefix("https://tickets.example"), follow=True)
    assert opened.status_code == 200
    assert "ana@example.com is verified" in opened.content.decode()
    user.refresh_from_db()
    assert has_verified_email(user)
    # Opening it again changes nothing.
    assert client.get(link.removeprefix("https://tickets.example")).status_code == 302


def test_a_forged_an_altered_or_an_old_link_verifies_nothing(client, settings):
    user = UserFactory(email="ana@example.com")
    good = links.make_token(user_id=user.pk, email=user.email)
    forged = good[:-2] + ("xx" if not good.endswith("xx") else "yy")
    other = links.make_token(user_id=user.pk, email="evil@example.com")
    swapped = other.split(":")[0] + good[good.index(":") :]  # another address, this signature
    for token in (forged, swapped, "nonsense", "é" * 30):
        response = client.get(reverse("accounts:verify", args=[token]))
        assert response.status_code == 400, token
        assert "This link does not work any more" in response.content.decode()
    settings.ACCOUNTS = {**settings.ACCOUNTS, "VERIFICATION_LINK_MAX_AGE": timedelta(seconds=-1)}
    assert client.get(reverse("accounts:verify", args=[good])).status_code == 400
    assert not has_verified_email(user)
    # Control: the same link in time works.
    settings.ACCOUNTS = {**settings.ACCOUNTS, "VERIFICATION_LINK_MAX_AGE": timedelta(hours=1)}
    assert client.get(reverse("accounts:verify", args=[good])).status_code == 302
    assert has_verified_email(user)


def test_a_link_for_an_old_address_does_not_verify_the_new_one(client):
    user = UserFactory(email="old@example.com")
    old_link = links.make_token(user_id=user.pk, email="old@example.com")
    client.get(reverse("accounts:verify", args=[old_link]))
    assert has_verified_email(user)
    user.email = "new@example.com"
    user.save()
    assert not has_verified_email(user)


def test_forgot_password_resets_it_by_email_in_the_sites_look(client, mailoutbox, settings):
    settings.PUBLIC_BASE_URL = "https://tickets.example"
    user = UserFactory(email="ana@example.com")
    login = client.get(reverse("login")).content.decode()
    assert f'href="{reverse("password_reset")}"' in login

    form = client.get(reverse("password_reset"))
    html = form.content.decode()
    assert 'class="site-header"' in html and "Forgot your password?" in html
    done = client.post(reverse("password_reset"), {"email": "ANA@example.com"}, follow=True)
    assert "Check your e-mail" in done.content.decode()
    assert len(mailoutbox) == 1 and mailoutbox[0].to == ["ana@example.com"]
    link = re.search(r"https://tickets\.example(/accounts/reset/\S+/)", mailoutbox[0].body)
    assert link, mailoutbox[0].body

    choose = client.get(link.group(1), follow=True)
    assert "Choose a new password" in choose.content.decode()
    saved = client.post(
        choose.redirect_chain[-1][0],
        {"new_password1": "brand-new-seats-7", "new_password2": "brand-new-seats-7"},
        follow=True,
    )
    assert "Your new password is saved." in saved.content.decode()
    assert client.login(username=user.username, password="brand-new-seats-7")
    # The link works once.
    again = client.get(link.group(1), follow=True).content.decode()
    assert "This link does not work any more" in again


@pytest.mark.parametrize(
    ("language", "title", "button"),
    [
        ("de", "Passwort vergessen?", "Link senden"),
        ("ru", "Забыли пароль?", "Прислать ссылку"),
        ("en", "Forgot your password?", "Send me the link"),
    ],
)
def test_the_password_reset_pages_speak_every_language(client, language, title, button):
    html = client.get(reverse("password_reset"), HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert title in html and button in html
    signup = client.get(reverse("accounts:signup"), HTTP_ACCEPT_LANGUAGE=language)
    assert f'lang="{language}"' in signup.content.decode()


@pytest.mark.parametrize(
    ("language", "subject"),
    [
        ("de", "Bestätigen Sie Ihre E-Mail-Adresse für Seatkeeper"),
        ("ru", "Подтвердите адрес электронной почты для Seatkeeper"),
    ],
)
def test_the_verification_mail_is_in_the_customers_language(
    client, mailoutbox, language, subject, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("accounts:signup"),
            {"username": "t", "email": "t@ex.com", "password1": PASSWORD, "password2": PASSWORD},
            HTTP_ACCEPT_LANGUAGE=language,
        )
    assert [m.subject for m in mailoutbox] == [subject]


@pytest.mark.parametrize("next_url", ["êÐk", "bookings:mine", "//evil.example/", "/ok\n"])
def test_a_next_that_is_no_path_of_ours_is_ignored(client, next_url):
    """Found by the form fuzz: a `next` like "êÐk" reached redirect(), which took it for a
    view name (NoReverseMatch, 500)."""
    client.force_login(UserFactory(email="ana@example.com"))
    sent = client.post("/accounts/verify-email/", {"email": "ana@example.com", "next": next_url})
    assert sent.status_code == 302 and sent["Location"] == "/accounts/verify-email/"
