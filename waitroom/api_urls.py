from django.urls import path

from waitroom import room_api

app_name = "waitroom_api"
urlpatterns = [
    path("waiting-rooms/<int:room_id>", room_api.RoomApi.as_view(), name="room"),
    path("waiting-rooms/<int:room_id>/queue", room_api.QueueApi.as_view(), name="queue"),
    path(
        "waiting-rooms/<int:room_id>/queue/ticket",
        room_api.QueueSocketTicketApi.as_view(),
        name="queue_ticket",
    ),
    path(
        "waiting-rooms/<int:room_id>/challenge", room_api.ChallengeApi.as_view(), name="challenge"
    ),
]
