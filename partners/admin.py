"""Admin: endpoints (secret shown once, on creation) and the delivery log."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import models

from kernel.errors import InvalidRequest
from partners import services
from partners.models import WebhookDelivery, WebhookEndpoint
from partners.urls_check import check_endpoint_url


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    list_display = ["id", "url", "owner", "is_active", "created_at"]
    list_filter = ["is_active"]
    search_fields = ["url", "owner__username", "description"]
    readonly_fields = ["created_at", "updated_at"]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    actions = ["rotate_secrets"]

    @admin.action(
        description="Rotate the signing secret (the old one signs too for a while)",
        permissions=["change"],
    )
    def rotate_secrets(self, request, queryset):
        for endpoint in queryset:
            fresh = services.rotate_secret(endpoint=endpoint)
            until = f"{endpoint.previous_secret_expires_at:%Y-%m-%d %H:%M} UTC"
            self.message_user(
                request,
                f"New signing secret of {endpoint.url} (shown only now, store it): {fresh}. "
                f"The previous one also signs until {until}.",
                messages.WARNING,
            )

    def get_fields(self, request, obj=None):
        # The secret never appears on the change form; it is shown once after creation.
        return ["owner", "url", "event_types", "is_active", "description", *self.readonly_fields]

    def save_model(self, request, obj, form, change):
        try:
            if change:
                services.update_endpoint(
                    endpoint=obj,
                    url=obj.url,
                    event_types=obj.event_types,
                    is_active=obj.is_active,
                    description=obj.description,
                )
            else:
                created = services.create_endpoint(
                    owner=obj.owner,
                    url=obj.url,
                    event_types=obj.event_types,
                    description=obj.description,
                )
                obj.pk, obj.secret = created.pk, created.secret
                obj.created_at, obj.updated_at = created.created_at, created.updated_at
                self.message_user(
                    request,
                    f"Signing secret (shown only now, store it): {created.secret}",
                    messages.WARNING,
                )
        except InvalidRequest as exc:
            raise ValidationError(exc.detail) from exc

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)

        class CheckedForm(form):
            def clean(self):
                cleaned = super().clean()
                try:
                    if "url" in cleaned:
                        check_endpoint_url(cleaned["url"])
                    if "event_types" in cleaned:
                        cleaned["event_types"] = services.check_event_types(
                            list(cleaned["event_types"] or [])
                        )
                except InvalidRequest as exc:
                    raise ValidationError(exc.detail) from exc
                return cleaned

        return CheckedForm


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "event_type",
        "event_id",
        "endpoint",
        "status",
        "attempts",
        "last_response_code",
        "created_at",
        "delivered_at",
    ]
    list_filter = ["status", "event_type"]
    search_fields = ["event_id", "endpoint__url"]
    actions = ["send_again"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.action(description="Send failed deliveries again", permissions=["resend"])
    def send_again(self, request, queryset):
        sent = sum(
            services.retry_delivery(delivery_id=pk) for pk in queryset.values_list("pk", flat=True)
        )
        self.message_user(request, f"{sent} failed deliveries queued again.")

    def has_resend_permission(self, request) -> bool:
        return request.user.has_perm("partners.change_webhookendpoint")
