from django.urls import path

from events import api, plan_api

app_name = "events_api"
urlpatterns = [
    path("events", api.EventSearchApi.as_view(), name="search"),
    path("events/<int:event_id>", api.EventDetailApi.as_view(), name="detail"),
    path("events/<int:event_id>/seats", api.EventSeatMapApi.as_view(), name="seats"),
    path("venues/<int:venue_id>/plan", plan_api.VenuePlanApi.as_view(), name="venue-plan"),
]
