"""The event log: every outbox event published to a durable, replayable log for other systems.

`envelope` says what a logged event looks like on the wire (subject per booking, the outbox
event id as the message id); `publisher` is the interface a log implements (NATS JetStream
today, a Kafka producer later); `relay` moves unlogged outbox events into it; `reader` is the
consumer side (a durable consumer, one message in flight).  docs/event-log.md has the design and
the mapping to Kafka's terms.
"""

from django.conf import settings


def event_log_enabled() -> bool:
    """Whether outbox events go to the log (EVENT_LOG_URL set).  Here, not in `relay`, so
    that asking costs no import of the log's client (kernel/tasks.py)."""
    return bool(settings.EVENT_LOG["URL"])
