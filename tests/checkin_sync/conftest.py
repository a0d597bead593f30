from tests.nats_server import event_log, nats_server  # noqa: F401
