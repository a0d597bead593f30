"""The token check reads the Authorization header alone (config.api.tokens._AuthorizationOnly,
issue 26): DRF's parsing and its answers are unchanged for every shape of the header, and a
token request no longer builds `request.headers`."""

from __future__ import annotations

import pytest
from django.test import RequestFactory
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from config.api import tokens

HEADERS = [
    None,
    "Token abc123",
    "token abc123",
    "TOKEN abc123",
    "Token",
    "Token a b",
    "Bearer abc123",
    "Basic dXNlcjpwYXNz",
    "",
    "  Token   abc123  ",
    "Token \xff",  # latin-1 from the environ, not UTF-8: DRF's "invalid characters"
    b"Token abc123",
]


def request_with(authorization):
    extra = {"HTTP_ACCEPT_LANGUAGE": "de", "HTTP_X_OTHER": "1"}
    if authorization is not None:
        extra["HTTP_AUTHORIZATION"] = authorization
    return Request(RequestFactory().get("/api/bookings", **extra))


def answer(authenticator, request):
    try:
        return ("ok", authenticator.authenticate(request))
    except AuthenticationFailed as exc:
        return ("failed", str(exc.detail))


class Drf(TokenAuthentication):
    def authenticate_credentials(self, key):
        return ("user", key)


class Ours(tokens.CachedTokenAuthentication):
    def authenticate_credentials(self, key):
        return ("user", key)


@pytest.mark.parametrize("authorization", HEADERS)
def test_the_same_answer_as_drf_for_every_header(authorization):
    ours = request_with(authorization)
    assert answer(Ours(), ours) == answer(Drf(), request_with(authorization))
    assert "headers" not in ours._request.__dict__  # the dict of every header was not made


def test_control_a_wrong_header_read_is_caught(monkeypatch):
    """If the shim read another header, the comparison above would fail."""
    monkeypatch.setattr(
        tokens,
        "header",
        lambda request, name, default=None: request.META.get("HTTP_X_OTHER", default),
    )
    request = request_with("Token abc123")
    assert answer(Ours(), request) != answer(Drf(), request_with("Token abc123"))


@pytest.mark.django_db
def test_a_real_token_still_authenticates(client):
    from tests.factories import UserFactory

    user = UserFactory()
    token = tokens.Token.objects.create(user=user)
    response = client.get("/api/bookings", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200
    refused = client.get("/api/bookings", HTTP_AUTHORIZATION="Token nope")
    assert refused.status_code == 401
    assert refused["WWW-Authenticate"] == "Token"
