"""The REST API: DRF, camelCase JSON, throttles, API caches, the OpenAPI schema."""

from config.settings.environment import env
from config.settings.security import NUM_PROXIES

# --- REST API -------------------------------------------------------------------------------
# JSON is camelCase on the wire both ways; errors are RFC 9457 problem details.  Token auth for
# partners, session auth (with CSRF) for the site's own pages.  Per-user throttles count in the
# shared cache (Redis), so every web worker sees the same budget.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an anonymous request then gets 401 with `WWW-Authenticate: Token`.
        "config.api.tokens.CachedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # camelCase JSON as djangorestframework-camel-case writes it, by orjson
    # (kernel/web/renderers.py).
    "DEFAULT_RENDERER_CLASSES": ["kernel.web.renderers.CamelJSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "kernel.web.negotiation.QuickContentNegotiation",
    "DEFAULT_PARSER_CLASSES": ["config.api.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.exceptions.problem_exception_handler",
    "NUM_PROXIES": NUM_PROXIES,
    "DEFAULT_THROTTLE_RATES": {
        "holds": env("API_THROTTLE_HOLDS", default="30/min"),
        "payments": env("API_THROTTLE_PAYMENTS", default="20/min"),
        # Token requests per client address (password spraying) and per account named.
        "auth": env("API_THROTTLE_AUTH", default="10/min"),
        "auth_account": env("API_THROTTLE_AUTH_ACCOUNT", default="5/min"),
    },
}
# "12A" style values are never touched; only keys change case ("seat_no" <-> "seatNo").
JSON_CAMEL_CASE = {"JSON_UNDERSCOREIZE": {"no_underscore_before_number": True}}
# How long a token's user is remembered in the cache (config/api/tokens.py says what empties it).
API_TOKEN_CACHE_SECONDS = env.int("API_TOKEN_CACHE_SECONDS", default=60)
API_CACHE = {
    # The article's trade-off: reads may be a little stale, holds always ask the database.
    "FLIGHT_SEARCH_SECONDS": env.int("API_FLIGHT_SEARCH_CACHE_SECONDS", default=30),
    "SEAT_MAP_SECONDS": env.int("API_SEAT_MAP_CACHE_SECONDS", default=3),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Seatkeeper API",
    "DESCRIPTION": (
        "Seats that are never sold twice. JSON bodies are camelCase; errors are RFC 9457 "
        "problem details (`application/problem+json`). Authenticate with "
        "`Authorization: Token <token>` from `POST /api/auth/token`, or with the site's session "
        "cookie plus the `X-CSRFToken` header."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "FareClassEnum": "flights.models.FareClass",
        "BookingStatusEnum": "bookings.models.BookingStatus",
        "SeatStatusEnum": "flights.models.SeatStatus",
        "FlightStatusEnum": "flights.models.FlightStatus",
        "EventStatusEnum": "events.models.EventStatus",
        "EventCategoryEnum": "events.models.EventCategory",
        "PaymentStatusEnum": "payments.models.PaymentStatus",
        "TicketStatusEnum": "bookings.models.TicketStatus",
        "WaitlistStatusEnum": "bookings.models.WaitlistStatus",
        "ScanOutcomeEnum": "bookings.tickets.ScanOutcome",
    },
    "PREPROCESSING_HOOKS": ["payments.api.document_gateways_in_use"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "drf_spectacular.contrib.djangorestframework_camel_case.camelize_serializer_fields",
        "kernel.web.openapi.add_problem_headers",
        "kernel.web.openapi.camel_case_path_parameters",
        "kernel.web.openapi.forbid_nul_in_request_strings",
    ],
}
