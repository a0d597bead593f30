"""Reads, scoped to who asks: staff who may change endpoints see all, a partner its own."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from partners.errors import EndpointNotFound
from partners.models import WebhookDelivery, WebhookEndpoint


def may_manage_webhooks(user: AbstractBaseUser) -> bool:
    return user.is_authenticated and (
        user.has_perm("partners.manage_own_webhooks")
        or user.has_perm("partners.change_webhookendpoint")
    )


def endpoints_for(*, user: AbstractBaseUser) -> QuerySet[WebhookEndpoint]:
    endpoints = WebhookEndpoint.objects.order_by("id")
    if user.is_staff and user.has_perm("partners.change_webhookendpoint"):
        return endpoints
    return endpoints.filter(owner=user)


def access_endpoint(*, user: AbstractBaseUser, endpoint_id: int) -> WebhookEndpoint:
    endpoint = endpoints_for(user=user).filter(pk=endpoint_id).first()
    if endpoint is None:
        raise EndpointNotFound(f"No webhook endpoint {endpoint_id}.")
    return endpoint


def deliveries_for(*, endpoint: WebhookEndpoint, limit: int = 100) -> QuerySet[WebhookDelivery]:
    return endpoint.deliveries.order_by("-id")[:limit]
