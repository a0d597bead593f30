from django.urls import path

from waitroom import api, room_api

app_name = "waitroom_api"
urlpatterns = [
    path("flights/<int:flight_id>/waitlist", api.WaitlistApi.as_view(), name="waitlist"),
    path("events/<int:event_id>/waitlist", api.EventWaitlistApi.as_view(), name="event_waitlist"),
    path("waiting-rooms/<int:room_id>", room_api.RoomApi.as_view(), name="room"),
    path("waiting-rooms/<int:room_id>/queue", room_api.QueueApi.as_view(), name="queue"),
    path(
        "waiting-rooms/<int:room_id>/waitlist",
        room_api.QueueWaitlistApi.as_view(),
        name="queue_waitlist",
    ),
]
