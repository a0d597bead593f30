from django.urls import path

from payments.views import SandboxCheckoutView

app_name = "payments"
urlpatterns = [
    path(
        "sandbox/checkout/<str:charge_id>", SandboxCheckoutView.as_view(), name="sandbox-checkout"
    ),
]
