from django.urls import path

from waitroom import room_views, views

app_name = "waitroom"
urlpatterns = [
    path("flights/<int:flight_id>/waitlist/join/", views.join, name="join"),
    path("flights/<int:flight_id>/waitlist/leave/", views.leave, name="leave"),
    path("waitlist/state.json", views.state, name="state"),
    path("waiting-room/<int:room_id>/", room_views.queue_page, name="queue"),
    path("waiting-room/<int:room_id>/join/", room_views.join, name="queue_join"),
    path("waiting-room/<int:room_id>/status.json", room_views.status_json, name="queue_status"),
    path("waiting-room/<int:room_id>/enter/", room_views.enter, name="queue_enter"),
    path("waiting-room/<int:room_id>/waitlist/", room_views.join_waitlist, name="queue_waitlist"),
]
