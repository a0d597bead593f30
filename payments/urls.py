from django.urls import path

from payments import views
from payments.views import SandboxCheckoutView

app_name = "payments"
urlpatterns = [
    path("bookings/<int:booking_id>/pay/", views.checkout, name="checkout"),
    path("bookings/<int:booking_id>/cancel/", views.cancel, name="cancel"),
    # Answers 404 unless the sandbox is the gateway (see SandboxCheckoutView.dispatch).
    path(
        "sandbox/checkout/<str:charge_id>", SandboxCheckoutView.as_view(), name="sandbox-checkout"
    ),
]
