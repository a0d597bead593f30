from django.urls import path  # noqa: F401

app_name = "payments_api"
urlpatterns: list = []
