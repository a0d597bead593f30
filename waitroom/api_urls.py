from django.urls import path

from waitroom import api

app_name = "waitroom_api"
urlpatterns = [
    path("flights/<int:flight_id>/waitlist", api.WaitlistApi.as_view(), name="waitlist"),
]
