"""The waitlist's pages (namespace `waitlist`): join and leave a flight's, the state "My
bookings" polls, and the queue page's one-click join."""

from django.urls import path

from storefront import waitlist_views

app_name = "waitlist"
urlpatterns = [
    path("flights/<int:flight_id>/waitlist/join/", waitlist_views.join, name="join"),
    path("flights/<int:flight_id>/waitlist/leave/", waitlist_views.leave, name="leave"),
    path("waitlist/state.json", waitlist_views.state, name="state"),
    path(
        "waiting-room/<int:room_id>/waitlist/",
        waitlist_views.join_from_queue,
        name="queue_waitlist",
    ),
]
