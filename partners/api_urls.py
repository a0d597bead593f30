from django.urls import path

from partners import api

app_name = "partners_api"
urlpatterns = [
    path("partners/webhooks", api.EndpointListApi.as_view(), name="endpoints"),
    path("partners/webhooks/<int:endpoint_id>", api.EndpointApi.as_view(), name="endpoint"),
    path(
        "partners/webhooks/<int:endpoint_id>/rotate-secret",
        api.RotateSecretApi.as_view(),
        name="rotate_secret",
    ),
    path(
        "partners/webhooks/<int:endpoint_id>/deliveries",
        api.DeliveryListApi.as_view(),
        name="deliveries",
    ),
]
