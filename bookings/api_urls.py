from django.urls import path

from bookings import api

app_name = "bookings_api"
urlpatterns = [
    path("bookings", api.BookingListCreateApi.as_view(), name="list"),
    path("bookings/<int:booking_id>", api.BookingDetailApi.as_view(), name="detail"),
    path("checkin/scan", api.CheckinScanApi.as_view(), name="checkin-scan"),
]
