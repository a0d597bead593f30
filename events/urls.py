from django.urls import path

from events import views

app_name = "events"
urlpatterns = [
    path("events/", views.event_list, name="list"),
    path("events/<int:event_id>/", views.event_detail, name="detail"),
    path("events/<int:event_id>/seatmap.json", views.seat_map_snapshot, name="seat_map"),
    path("events/<int:event_id>/hold/", views.hold_seats, name="hold"),
    path(
        "events/<int:event_id>/best-available/",
        views.hold_best_available,
        name="hold_best_available",
    ),
    path("events/<int:event_id>/hold-standing/", views.hold_standing, name="hold_standing"),
    path("events/<int:event_id>/waitlist/join/", views.waitlist_join, name="waitlist_join"),
    path("events/<int:event_id>/waitlist/leave/", views.waitlist_leave, name="waitlist_leave"),
]
