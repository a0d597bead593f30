from channels.auth import AuthMiddlewareStack
from django.urls import path

from waitroom.consumers import QueueConsumer

# Only this route reads the session: the seat-map websockets stay anonymous and cost no
# query per handshake.
websocket_urlpatterns = [
    path("ws/waiting-room/<int:room_id>/", AuthMiddlewareStack(QueueConsumer.as_asgi())),
]
