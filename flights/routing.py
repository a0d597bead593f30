from django.urls import path

from flights.consumers import SeatMapConsumer

websocket_urlpatterns = [
    path("ws/flights/<int:flight_id>/seats/", SeatMapConsumer.as_asgi()),
]
