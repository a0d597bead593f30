"""Partners register webhook endpoints over REST.  Thin: validate, call a service.

Who: staff with `partners.change_webhookendpoint` (all endpoints) and users holding
`partners.manage_own_webhooks` (their own).  The secret is in the answer to the POST only.
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from kernel.web.openapi import problems
from partners import selectors, services
from partners.models import DeliveryStatus, PartnerEventType

TAGS = ["partner webhooks"]


class MayManageWebhooks(BasePermission):
    message = "You may not manage webhook endpoints."

    def has_permission(self, request, view) -> bool:
        return selectors.may_manage_webhooks(request.user)


class EndpointCreateSerializer(serializers.Serializer):
    url = serializers.URLField(max_length=500)
    event_types = serializers.ListField(
        child=serializers.ChoiceField(choices=PartnerEventType.choices), min_length=1, max_length=4
    )
    description = serializers.CharField(
        max_length=200, required=False, default="", allow_blank=True
    )


class EndpointUpdateSerializer(serializers.Serializer):
    url = serializers.URLField(max_length=500, required=False)
    event_types = serializers.ListField(
        child=serializers.ChoiceField(choices=PartnerEventType.choices),
        min_length=1,
        max_length=4,
        required=False,
    )
    is_active = serializers.BooleanField(required=False)
    description = serializers.CharField(max_length=200, required=False, allow_blank=True)


class EndpointSerializer(serializers.Serializer):
    endpoint_id = serializers.IntegerField(source="pk")
    url = serializers.URLField()
    event_types = serializers.ListField(child=serializers.CharField())
    is_active = serializers.BooleanField()
    description = serializers.CharField()
    created_at = serializers.DateTimeField()


class EndpointCreatedSerializer(EndpointSerializer):
    secret = serializers.CharField(
        help_text="Signing secret. Shown only in this answer: store it now."
    )


class DeliverySerializer(serializers.Serializer):
    delivery_id = serializers.IntegerField(source="pk")
    event_id = serializers.UUIDField()
    event_type = serializers.CharField()
    status = serializers.ChoiceField(choices=DeliveryStatus.choices)
    attempts = serializers.IntegerField()
    last_response_code = serializers.IntegerField(allow_null=True)
    next_attempt_at = serializers.DateTimeField(allow_null=True)
    delivered_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class EndpointListApi(APIView):
    permission_classes = [MayManageWebhooks]

    @extend_schema(
        operation_id="partner_webhooks_list",
        responses={200: EndpointSerializer(many=True), **problems(401, 403)},
        tags=TAGS,
    )
    def get(self, request):
        endpoints = selectors.endpoints_for(user=request.user)
        return Response(EndpointSerializer(endpoints, many=True).data)

    @extend_schema(
        operation_id="partner_webhooks_create",
        request=EndpointCreateSerializer,
        responses={201: EndpointCreatedSerializer, **problems(400, 401, 403)},
        tags=TAGS,
        description="Register an endpoint. Events are POSTed as JSON signed in the "
        "`Seatkeeper-Signature: t=<unix>,v1=<hex HMAC-SHA256 of '<t>.<body>'>` header; "
        "`Seatkeeper-Event-Id` (also the body's `id`) is stable across retries: dedupe by it.",
    )
    def post(self, request):
        data = EndpointCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        endpoint = services.create_endpoint(owner=request.user, **data.validated_data)
        return Response(
            EndpointCreatedSerializer(endpoint).data,
            status=201,
            headers={"Location": reverse("partners_api:endpoint", args=[endpoint.pk])},
        )


class EndpointApi(APIView):
    permission_classes = [MayManageWebhooks]

    @extend_schema(
        operation_id="partner_webhooks_read",
        responses={200: EndpointSerializer, **problems(401, 403, 404)},
        tags=TAGS,
    )
    def get(self, request, endpoint_id: int):
        endpoint = selectors.access_endpoint(user=request.user, endpoint_id=endpoint_id)
        return Response(EndpointSerializer(endpoint).data)

    @extend_schema(
        operation_id="partner_webhooks_update",
        request=EndpointUpdateSerializer,
        responses={200: EndpointSerializer, **problems(400, 401, 403, 404)},
        tags=TAGS,
    )
    def patch(self, request, endpoint_id: int):
        endpoint = selectors.access_endpoint(user=request.user, endpoint_id=endpoint_id)
        data = EndpointUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        endpoint = services.update_endpoint(endpoint=endpoint, **data.validated_data)
        return Response(EndpointSerializer(endpoint).data)

    @extend_schema(
        operation_id="partner_webhooks_delete",
        responses={204: None, **problems(401, 403, 404)},
        tags=TAGS,
    )
    def delete(self, request, endpoint_id: int):
        endpoint = selectors.access_endpoint(user=request.user, endpoint_id=endpoint_id)
        services.delete_endpoint(endpoint=endpoint)
        return Response(status=204)


class RotatedSecretSerializer(serializers.Serializer):
    secret = serializers.CharField(help_text="The new signing secret. Shown only in this answer.")
    previousSecretExpiresAt = serializers.DateTimeField(
        source="previous_secret_expires_at",
        help_text="Until then deliveries carry a second v1 signature, made with the old secret.",
    )


class RotateSecretApi(APIView):
    permission_classes = [MayManageWebhooks]

    @extend_schema(
        operation_id="partner_webhooks_rotate_secret",
        request=None,
        responses={200: RotatedSecretSerializer, **problems(401, 403, 404)},
        tags=TAGS,
    )
    def post(self, request, endpoint_id: int):
        endpoint = selectors.access_endpoint(user=request.user, endpoint_id=endpoint_id)
        fresh = services.rotate_secret(endpoint=endpoint)
        body = {"secret": fresh, "previous_secret_expires_at": endpoint.previous_secret_expires_at}
        return Response(RotatedSecretSerializer(body).data)


class DeliveryListApi(APIView):
    permission_classes = [MayManageWebhooks]

    @extend_schema(
        operation_id="partner_webhooks_deliveries",
        responses={200: DeliverySerializer(many=True), **problems(401, 403, 404)},
        tags=TAGS,
        description="The latest 100 deliveries to this endpoint, newest first.",
    )
    def get(self, request, endpoint_id: int):
        endpoint = selectors.access_endpoint(user=request.user, endpoint_id=endpoint_id)
        deliveries = selectors.deliveries_for(endpoint=endpoint)
        return Response(DeliverySerializer(deliveries, many=True).data)
