"""Accounts over REST: sign up (`POST /api/accounts`) and who am I (`GET /api/me`).

For partners that act for customers: create the customer's account (the same rules as the
sign-up page: `accounts.services.sign_up`, its per-address limit and verification mail) and
get its token in the same answer, or act as one agent account (`customerId` on a hold) and
ask `/api/me` whether the token may."""

from __future__ import annotations

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.urls import reverse
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.selectors import has_verified_email
from accounts.services import sign_up
from accounts.tokens import issue_token
from bookings.selectors import acts_for_customers
from kernel.web.client_ip import client_ip
from kernel.web.openapi import problems


class SignUpRequestSerializer(serializers.Serializer):
    username = serializers.CharField(
        max_length=150,
        validators=[UnicodeUsernameValidator()],
        help_text="Letters, digits and @/./+/-/_ only.",
    )
    email = serializers.EmailField(
        max_length=254, help_text="Required: confirmations and tickets go here (one per account)."
    )
    password = serializers.CharField(
        max_length=128, trim_whitespace=False, help_text="Checked like the sign-up page's."
    )

    def validate_username(self, username: str) -> str:
        if get_user_model().objects.filter(username__iexact=username).exists():
            raise serializers.ValidationError(gettext("A user with that username already exists."))
        return username

    def validate(self, data):
        candidate = get_user_model()(username=data["username"], email=data["email"])
        try:
            password_validation.validate_password(data["password"], candidate)
        except DjangoValidationError as error:
            raise serializers.ValidationError({"password": list(error.messages)}) from error
        return data


class MeSerializer(serializers.Serializer):
    user_id = serializers.IntegerField(source="pk")
    username = serializers.CharField()
    email = serializers.CharField(allow_blank=True)
    email_verified = serializers.SerializerMethodField(
        help_text="Some waiting rooms let in only verified addresses (403 `email-not-verified`)."
    )
    acts_for_customers = serializers.SerializerMethodField(
        help_text="May book for, see and cancel other customers' bookings (`customerId`)."
    )

    def get_email_verified(self, user: AbstractBaseUser) -> bool:
        return has_verified_email(user)

    def get_acts_for_customers(self, user: AbstractBaseUser) -> bool:
        return acts_for_customers(user)


class SignedUpSerializer(MeSerializer):
    token = serializers.CharField(help_text="The new account's API token.")


class SignUpApi(APIView):
    # No authentication: a stale session must not turn this into a CSRF-checked call.
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="accounts_create",
        tags=["auth"],
        summary="Sign up a customer",
        description=(
            "Creates a customer account as the sign-up page does (a verification link is "
            "e-mailed) and answers its API token. Limited per client address (README, "
            '"Limits": 429 `too-many-signups` with `Retry-After`).'
        ),
        request=SignUpRequestSerializer,
        responses={
            201: SignedUpSerializer,
            **problems(
                400,
                409,
                415,
                429,
                s409="The e-mail address belongs to another account (`email-taken`).",
            ),
        },
        auth=[],
    )
    def post(self, request):
        data = SignUpRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        email = get_user_model().objects.normalize_email(data.validated_data["email"].strip())
        with transaction.atomic():
            user = sign_up(
                username=data.validated_data["username"],
                email=email,
                password=data.validated_data["password"],
                address=client_ip(request) or None,
            )
            token = issue_token(user=user)
        body = {**MeSerializer(user).data, "token": token.key}
        return Response(body, status=201, headers={"Location": reverse("api-me")})


class MeApi(APIView):
    @extend_schema(
        operation_id="me_retrieve",
        tags=["auth"],
        summary="Who the token belongs to",
        responses={200: MeSerializer, **problems(401)},
    )
    def get(self, request):
        return Response(MeSerializer(request.user).data)
