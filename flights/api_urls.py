from django.urls import path

from flights import api, checkin_api, volunteer_api

app_name = "flights_api"
urlpatterns = [
    path("flights", api.FlightSearchApi.as_view(), name="search"),
    path("flights/<int:flight_id>", api.FlightDetailApi.as_view(), name="detail"),
    path("flights/<int:flight_id>/seats", api.SeatMapApi.as_view(), name="seats"),
    path(
        "bookings/<int:booking_id>/online-check-in",
        checkin_api.OnlineCheckInApi.as_view(),
        name="online_check_in",
    ),
    path(
        "bookings/<int:booking_id>/volunteer-offers/<int:offer_id>",
        volunteer_api.VolunteerAnswerApi.as_view(),
        name="volunteer_answer",
    ),
]
