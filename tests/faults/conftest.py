from tests.api.conftest import fresh_cache, generous_throttles  # noqa: F401  (autouse)
