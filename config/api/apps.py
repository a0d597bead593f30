from django.apps import AppConfig


class ApiConfig(AppConfig):
    """Not a domain app: project wiring that needs every other app ready (it is installed
    last): the API plumbing's signal receivers and hooks (the token cache), and permissions
    for the admin actions of installed libraries (admin autodiscovery has run by now)."""

    name = "config.api"
    label = "seatkeeper_api"

    def ready(self) -> None:
        from django.contrib import admin

        from accounts.tokens import when_tokens_issued
        from config.admin_actions import declare_library_action_permissions
        from config.api import tokens

        tokens.connect_token_cache_invalidation()
        when_tokens_issued(tokens.cache_issued_tokens)
        declare_library_action_permissions(admin.site)
