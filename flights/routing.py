from django.urls import path

from bookings.consumers import SeatMapConsumer
from bookings.models import SaleKind

websocket_urlpatterns = [
    path("ws/flights/<int:ref>/seats/", SeatMapConsumer.as_asgi(kind=SaleKind.FLIGHT)),
]
