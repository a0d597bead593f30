from django.apps import AppConfig


class WaitroomConfig(AppConfig):
    name = "waitroom"
    verbose_name = "Waiting room"

    def ready(self) -> None:
        from bookings.waitlist import register_join_check
        from kernel.metrics import install_sink, register_waiting_room
        from waitroom import outbox_handlers  # noqa: F401  (registers the consumers)
        from waitroom.gate import require_queue_place_for_waitlist
        from waitroom.origin_health import note_hold
        from waitroom.panel import open_room_lengths, open_room_panels
        from waitroom.protection import connect_protection_cache_invalidation

        # Holds ask the cache whether a flight is protected; staff changes retire the answers.
        connect_protection_cache_invalidation()
        # Every waitlist join, through any door: on a protected sale, only people in its queue.
        register_join_check("waiting-room", require_queue_place_for_waitlist)
        # Every hold's time and too-busy answer, per sale: adaptive admission's signal.
        install_sink(note_hold)
        # The staff panel's figures, on /metrics too.
        register_waiting_room(length=open_room_lengths, panel=open_room_panels)
