"""Error tracking is on only with a DSN; with one, errors (and Celery task errors) reach the
transport, without personal data."""

import sentry_sdk
from sentry_sdk.transport import Transport

from config.sentry import init_sentry


class CapturingTransport(Transport):
    def __init__(self, options=None):
        super().__init__(options)
        self.envelopes = []

    def capture_envelope(self, envelope):
        self.envelopes.append(envelope)


def events(transport):
    return [
        item.payload.json
        for envelope in transport.envelopes
        for item in envelope.items
        if item.type == "event"
    ]


def test_no_dsn_means_no_sdk():
    assert init_sentry(dsn="") is False
    assert not sentry_sdk.get_client().is_active()


def test_with_a_dsn_errors_are_captured_with_django_and_celery_integrations():
    transport = CapturingTransport()
    try:
        assert init_sentry(
            dsn="https://public@sentry.example.invalid/1", environment="test", transport=transport
        )
        client = sentry_sdk.get_client()
        assert client.is_active()
        assert {"django", "celery"} <= set(client.integrations)
        assert not client.options["send_default_pii"]
        assert client.options["include_local_variables"] is False
        assert client.options["max_request_body_size"] == "never"
        try:
            raise RuntimeError("payment gateway exploded")
        except RuntimeError as exc:
            sentry_sdk.capture_exception(exc)
        sentry_sdk.flush()
        (event,) = events(transport)
        assert event["environment"] == "test"
        assert event["exception"]["values"][0]["value"] == "payment gateway exploded"
    finally:
        sentry_sdk.get_client().close()
        sentry_sdk.get_global_scope().set_client(None)  # back to no client
    assert not sentry_sdk.get_client().is_active()
