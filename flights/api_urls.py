from django.urls import path  # noqa: F401

app_name = "flights_api"
urlpatterns: list = []
