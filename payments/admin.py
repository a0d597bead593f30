"""Staff views of payments, refunds and webhook events (read-only: money moves only through
services), and the editable refund policies."""

from django.contrib import admin
from django.utils import timezone

from kernel.replica_admin import ChangeListFromReplica
from payments.models import Payment, Refund, RefundPolicy, RefundStatus, WebhookEvent
from payments.refunds import queue_refund


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class RefundInline(admin.TabularInline):
    model = Refund
    extra = 0
    can_delete = False
    readonly_fields = [
        "amount",
        "currency",
        "status",
        "reason",
        "goodwill",
        "policy_amount",
        "approved_by",
        "gateway_reference",
        "created_at",
        "completed_at",
    ]
    fields = readonly_fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Payment)
class PaymentAdmin(ChangeListFromReplica, ReadOnlyAdmin):
    list_display = [
        "id",
        "booking",
        "customer",
        "status",
        "amount",
        "currency",
        "refunded_amount",
        "gateway",
        "gateway_reference",
        "created_at",
    ]
    list_filter = ["status", "gateway"]
    search_fields = ["gateway_reference", "idempotency_key", "booking__id", "customer__username"]
    list_select_related = ["booking", "customer"]
    inlines = [RefundInline]
    # Cancelling is done from the booking (Bookings → "Cancel selected bookings with refund"),
    # which shows the policy's refund for each booking and asks for confirmation first.
    actions = None


@admin.register(Refund)
class RefundAdmin(ChangeListFromReplica, ReadOnlyAdmin):
    list_display = [
        "id",
        "payment",
        "amount",
        "currency",
        "status",
        "reason",
        "goodwill",
        "approved_by",
        "created_at",
        "completed_at",
    ]
    list_filter = ["status", "reason", "goodwill"]
    actions = ["retry_refund"]

    def has_retry_permission(self, request) -> bool:
        return request.user.has_perm("payments.change_refund")

    @admin.action(description="Retry failed refunds through the gateway", permissions=["retry"])
    def retry_refund(self, request, queryset):
        retried = 0
        for refund in queryset.filter(status=RefundStatus.FAILED):
            if Refund.objects.filter(pk=refund.pk, status=RefundStatus.FAILED).update(
                status=RefundStatus.PENDING, failure_reason=""
            ):
                queue_refund(refund_id=refund.pk)
                retried += 1
        self.message_user(request, f"{retried} refund(s) sent to the gateway again.")


@admin.register(WebhookEvent)
class WebhookEventAdmin(ReadOnlyAdmin):
    list_display = ["event_id", "gateway", "event_type", "outcome", "received_at", "processed_at"]
    list_filter = ["gateway", "event_type"]
    search_fields = ["event_id"]


@admin.register(RefundPolicy)
class RefundPolicyAdmin(admin.ModelAdmin):
    list_display = [
        "kind",
        "sale",
        "fare_class",
        "full_refund_days",
        "partial_refund_percent",
        "partial_refund_hours",
        "resale_fee_percent",
        "updated_at",
    ]
    readonly_fields = ["updated_at"]
    list_filter = ["kind"]
    raw_id_fields = ["sale"]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "kind",
                    "sale",
                    "fare_class",
                    "full_refund_days",
                    "partial_refund_percent",
                    "partial_refund_hours",
                    "resale_fee_percent",
                    "updated_at",
                ],
                "description": "Full refund until N days before the start (departure, show); "
                "then the percentage until H hours before it; nothing after that. No "
                "cancellation after the start. A policy is for one catalogue (flights or "
                "events); with a sale it overrides the catalogue's for that sale only; a blank "
                "class covers every class. The resale fee is kept from the seller's refund "
                "when their tickets are resold through the waitlist.",
            },
        )
    ]

    def save_model(self, request, obj, form, change):
        obj.updated_at = timezone.now()
        super().save_model(request, obj, form, change)
