from django.urls import path

from payments.api import PayForBookingApi, PaymentWebhookApi, RefundQuoteApi, gateway_webhook_view
from payments.gateways import gateway_names

app_name = "payments_api"
urlpatterns = [
    path("bookings/<int:booking_id>/payments", PayForBookingApi.as_view(), name="pay"),
    path("bookings/<int:booking_id>/refund-quote", RefundQuoteApi.as_view(), name="refund-quote"),
    path("payments/webhook", PaymentWebhookApi.as_view(), name="webhook"),
    # One route per gateway (each signs with its own header, documented as required); any
    # other name is the API's 404 problem.
    *(
        path(f"payments/webhook/{name}", gateway_webhook_view(name), name=f"webhook-{name}")
        for name in gateway_names()
    ),
]
