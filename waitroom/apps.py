from django.apps import AppConfig


class WaitroomConfig(AppConfig):
    name = "waitroom"
    verbose_name = "Waiting room and waitlist"

    def ready(self) -> None:
        # Registers the waitlist's outbox consumers (offer e-mails) with the relay.
        from waitroom import handlers  # noqa: F401
        from waitroom.protection import connect_protection_cache_invalidation

        # Holds ask the cache whether a flight is protected; staff changes retire the answers.
        connect_protection_cache_invalidation()
