from django.urls import path

from waitroom import views

app_name = "waitroom"
urlpatterns = [
    path("flights/<int:flight_id>/waitlist/join/", views.join, name="join"),
    path("flights/<int:flight_id>/waitlist/leave/", views.leave, name="leave"),
    path("waitlist/state.json", views.state, name="state"),
]
