from django.urls import path

from waitroom import room_views

app_name = "waitroom"
urlpatterns = [
    path("waiting-room/<int:room_id>/", room_views.queue_page, name="queue"),
    path("waiting-room/<int:room_id>/join/", room_views.join, name="queue_join"),
    path("waiting-room/<int:room_id>/status.json", room_views.status_json, name="queue_status"),
    path("waiting-room/<int:room_id>/enter/", room_views.enter, name="queue_enter"),
    path("waiting-room/<int:room_id>/challenge.json", room_views.challenge, name="challenge"),
]
