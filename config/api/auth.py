"""`POST /api/auth/token`: trade a username and password for an API token."""

from __future__ import annotations

from django.contrib.auth import authenticate
from django.utils.text import format_lazy
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.tokens import issue_token
from kernel.web.openapi import problems
from kernel.web.throttles import AuthAccountThrottle, AuthThrottle, rate_text


class TokenRequestSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=128, trim_whitespace=False)


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")


class ObtainTokenApi(APIView):
    # No authentication here: a stale session must not turn this into a CSRF-checked call.
    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [AuthThrottle, AuthAccountThrottle]

    def get_authenticate_header(self, request) -> str:
        # Without authenticators DRF would turn a failed login into 403; it is a 401.
        return "Token"

    @extend_schema(
        operation_id="auth_token_create",
        tags=["auth"],
        summary="Get an API token",
        request=TokenRequestSerializer,
        description=(
            "Limited per client address and per account (the `username` sent), in the shared "
            'cache: README, "Limits". Over either: 429 with `Retry-After`. Failed logins '
            "also lock the username and the address out for a while (429)."
        ),
        responses={
            200: TokenSerializer,
            **problems(
                400,
                401,
                415,
                429,
                s429=format_lazy(
                    "Too many token requests from this address ({}) or for this account ({}), "
                    "or too many failed logins; retry after `Retry-After` seconds.",
                    rate_text("auth"),
                    rate_text("auth_account"),
                ),
            ),
        },
        auth=[],
    )
    def post(self, request):
        data = TokenRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(
            request._request,
            username=data.validated_data["username"],
            password=data.validated_data["password"],
        )
        if user is None or not user.is_active:
            raise AuthenticationFailed("Unable to log in with the provided credentials.")
        token = issue_token(user=user)
        return Response(TokenSerializer({"token": token.key}).data)
