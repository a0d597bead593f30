from tests.waitroom.room_helpers import room_redis  # noqa: F401  (fixture for this package)
