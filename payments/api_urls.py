from django.urls import path

from payments.api import PayForBookingApi, PaymentWebhookApi

app_name = "payments_api"
urlpatterns = [
    path("bookings/<int:booking_id>/payments", PayForBookingApi.as_view(), name="pay"),
    path("payments/webhook", PaymentWebhookApi.as_view(), name="webhook"),
    path("payments/webhook/<str:gateway>", PaymentWebhookApi.as_view(), name="webhook-gateway"),
]
