from django.apps import AppConfig


class WaitroomConfig(AppConfig):
    name = "waitroom"
    verbose_name = "Waiting room"

    def ready(self) -> None:
        from waitroom.protection import connect_protection_cache_invalidation

        # Holds ask the cache whether a flight is protected; staff changes retire the answers.
        connect_protection_cache_invalidation()
