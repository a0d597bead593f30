from django.urls import path

from events import views

app_name = "events"
urlpatterns = [
    path("events/", views.event_list, name="list"),
    path("events/<int:event_id>/", views.event_detail, name="detail"),
]
