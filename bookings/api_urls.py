from django.urls import path

from bookings.api import CheckinScanApi

app_name = "bookings_api"
urlpatterns = [
    path("checkin/scan", CheckinScanApi.as_view(), name="checkin-scan"),
]
