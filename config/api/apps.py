from django.apps import AppConfig


class ApiConfig(AppConfig):
    """Not a domain app: it only wires the API plumbing's signal receivers (the token cache)."""

    name = "config.api"
    label = "seatkeeper_api"

    def ready(self) -> None:
        from config.api import tokens

        tokens.connect_token_cache_invalidation()
