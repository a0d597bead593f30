from django.urls import path

from payments.api import GatewayWebhookApi, PayForBookingApi, PaymentWebhookApi, RefundQuoteApi

app_name = "payments_api"
urlpatterns = [
    path("bookings/<int:booking_id>/payments", PayForBookingApi.as_view(), name="pay"),
    path("bookings/<int:booking_id>/refund-quote", RefundQuoteApi.as_view(), name="refund-quote"),
    path("payments/webhook", PaymentWebhookApi.as_view(), name="webhook"),
    path("payments/webhook/<str:gateway>", GatewayWebhookApi.as_view(), name="webhook-gateway"),
]
