from django.urls import path

from payments import views
from payments.gateways import sandbox_enabled
from payments.views import SandboxCheckoutView

app_name = "payments"
urlpatterns = [
    path("bookings/<int:booking_id>/pay/", views.checkout, name="checkout"),
    path("bookings/<int:booking_id>/cancel/", views.cancel, name="cancel"),
]
# The simulated provider's hosted checkout exists only while the sandbox is the gateway
# (read when the URLconf is first loaded, i.e. after settings).
if sandbox_enabled():
    urlpatterns.append(
        path(
            "sandbox/checkout/<str:charge_id>",
            SandboxCheckoutView.as_view(),
            name="sandbox-checkout",
        )
    )
