from django.urls import path  # noqa: F401

app_name = "bookings"
urlpatterns: list = []
