"""An event's life after it went on sale: when it ends, moving it to FINISHED then, and who
may still call it off once it has begun.

The rules are written once here; `events.services.cancel_event`, the admin's confirmation
page and the beat task all ask them (docs/events.md, "Ending and calling off")."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import DateTimeField, ExpressionWrapper, F, Value
from django.utils import timezone
from django.utils.translation import gettext

from events.errors import EventNotEditable
from events.models import Event, EventStatus
from payments.cancellation import may_refund_goodwill


def has_begun(event: Event, *, now: datetime) -> bool:
    return event.status == EventStatus.FINISHED or event.starts_at <= now


def has_ended(event: Event, *, now: datetime) -> bool:
    """FINISHED, or past its end although the beat has not marked it yet (it runs every
    minute): the rule must not depend on when the task last ran."""
    return event.status == EventStatus.FINISHED or event.ends_at <= now


def check_may_call_off(event: Event, *, by: AbstractBaseUser | None, now: datetime) -> bool:
    """Whether calling `event` off now refunds as goodwill (True: it has begun), or
    EventNotEditable when it may not be called off at all:

    - a FINISHED (or ended) event cannot be called off: the show took place;
    - a begun one only by staff holding `payments.refund_goodwill`, since every refund is then
      a full refund that the customer's own cancel would be refused (the refunds record it);
    - before its start, anyone the front door allowed (the admin asks for
      `bookings.change_booking` too): the organiser called it off, the policy refunds in full.
    """
    if has_ended(event, now=now):
        raise EventNotEditable(
            gettext("%(name)s has already taken place; it can no longer be called off.")
            % {"name": event.name}
        )
    if not has_begun(event, now=now):
        return False
    if by is None or not may_refund_goodwill(by):
        raise EventNotEditable(
            gettext(
                "%(name)s has already started: only staff who may grant goodwill refunds can "
                "call it off now. Nothing was cancelled."
            )
            % {"name": event.name}
        )
    return True


def finish_events(*, now: datetime | None = None) -> int:
    """Beat job: every event on sale whose end has passed becomes FINISHED, in one conditional
    update (a row cancelled or changed meanwhile is simply not matched).  Safe to run twice."""
    now = now or timezone.now()
    ended = ExpressionWrapper(Value(now) - F("duration"), output_field=DateTimeField())
    with transaction.atomic():
        return Event.objects.filter(status=EventStatus.ON_SALE, starts_at__lte=ended).update(
            status=EventStatus.FINISHED, status_changed_at=now
        )
