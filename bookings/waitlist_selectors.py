"""The waitlist's reads: a customer's place in line, their live entries."""

from bookings import catalogue
from bookings.models import ACTIVE_WAITLIST_STATUSES, WaitlistEntry, WaitlistStatus


def waitlist_position(*, entry: WaitlistEntry) -> int | None:
    """1-based place in the queue among those still waiting; None once no longer waiting."""
    if entry.status != WaitlistStatus.WAITING:
        return None
    return (
        WaitlistEntry.objects.filter(
            sale_id=entry.sale_id,
            fare_class=entry.fare_class,
            status=WaitlistStatus.WAITING,
            id__lt=entry.id,
        ).count()
        + 1
    )


def active_entry(*, customer, sale_id: int, fare_class: str) -> WaitlistEntry | None:
    return (
        WaitlistEntry.objects.filter(
            customer=customer,
            sale_id=sale_id,
            fare_class=fare_class,
            status__in=ACTIVE_WAITLIST_STATUSES,
        )
        .select_related("offer")
        .first()
    )


def waitlist_of(*, customer) -> list[WaitlistEntry]:
    """The customer's live entries (waiting or offered), each with `position` set."""
    entries = list(
        WaitlistEntry.objects.filter(customer=customer, status__in=ACTIVE_WAITLIST_STATUSES)
        .select_related("sale", *catalogue.detail_paths("sale__"), "offer")
        .order_by("joined_at", "id")
    )
    for entry in entries:
        entry.position = waitlist_position(entry=entry)
    return entries


def waitlist_fingerprint(entries: list[WaitlistEntry]) -> str:
    """What "My bookings" shows of the waitlist, in one short string: the page polls it and
    reloads when it changes (an offer arrived, a place in line moved, an offer lapsed)."""
    return ";".join(f"{e.pk}:{e.status}:{e.position}:{e.offer_id or ''}" for e in entries)
