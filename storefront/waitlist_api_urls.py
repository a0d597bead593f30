"""The waitlist over REST (namespace `waitlist_api`): a flight's, an event's, and the
waiting room's one-click join."""

from django.urls import path

from storefront import waitlist_api

app_name = "waitlist_api"
urlpatterns = [
    path("flights/<int:flight_id>/waitlist", waitlist_api.WaitlistApi.as_view(), name="waitlist"),
    path(
        "events/<int:event_id>/waitlist",
        waitlist_api.EventWaitlistApi.as_view(),
        name="event_waitlist",
    ),
    path(
        "waiting-rooms/<int:room_id>/waitlist",
        waitlist_api.QueueWaitlistApi.as_view(),
        name="queue_waitlist",
    ),
]
