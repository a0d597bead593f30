from django.urls import path

from payments.api import (
    GatewayWebhookApi,
    PayForBookingApi,
    PaymentWebhookApi,
    RefundQuoteApi,
    gateway_webhook_api,
)
from payments.gateways import gateway_names

app_name = "payments_api"
urlpatterns = [
    path("bookings/<int:booking_id>/payments", PayForBookingApi.as_view(), name="pay"),
    path("bookings/<int:booking_id>/refund-quote", RefundQuoteApi.as_view(), name="refund-quote"),
    path("payments/webhook", PaymentWebhookApi.as_view(), name="webhook"),
    # Each gateway's own route first (the schema names its signature header), then any
    # other name: 404.
    *(
        path(
            f"payments/webhook/{name}", gateway_webhook_api(name).as_view(), name=f"webhook-{name}"
        )
        for name in gateway_names()
    ),
    path("payments/webhook/<str:gateway>", GatewayWebhookApi.as_view(), name="webhook-gateway"),
]
