from django.urls import path

from flights import checkin_views, views, volunteer_views

app_name = "flights"
urlpatterns = [
    path("", views.search, name="search"),
    path("flights/<int:flight_id>/seats/", views.seat_picker, name="seat_picker"),
    path("flights/<int:flight_id>/seatmap.json", views.seat_map_snapshot, name="seat_map"),
    path(
        "bookings/<int:booking_id>/online-check-in/",
        checkin_views.online_check_in,
        name="online_check_in",
    ),
    path(
        "bookings/<int:booking_id>/volunteer-offers/<int:offer_id>/",
        volunteer_views.volunteer_answer,
        name="volunteer_answer",
    ),
]
