"""What the engine asks about a sale, answered by the catalogue that owns it.

The engine sells seats and inventory classes of a `Sale` without knowing whether a flight or
an event stands behind it.  Each catalogue registers one object implementing `Catalogue` for
its `SaleKind` in its AppConfig.ready(); the engine looks it up by `sale.kind`.  This module
imports no catalogue: the arrow points from flights/events down to here, never back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from django.db.models import Q
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from bookings.models import Sale, SaleKind, Ticket
from kernel.errors import DomainError
from kernel.settled import SettledColumn


@dataclass(frozen=True)
class SaleSummary:
    """How a sale is named to people: e-mails, tickets, the gate."""

    title: str  # "flight VN213", "Hamlet"
    starts_at: datetime
    time_zone: str  # IANA name, for local times
    place: str  # "SGN → HAN", "Main hall, Opera House"


CLOSED_REFUNDED_TITLE = _("This can no longer be booked")
CLOSED_REFUNDED = _(
    "The sale closed before the payment arrived, so the places were released. The payment is "
    "refunded in full."
)


@dataclass(frozen=True)
class SaleTexts:
    """The engine's messages that name what is sold ("on this flight", "for this event"),
    written by the catalogue so each reads right in every language.  Lazy translations;
    formatted with %-dicts whose unused keys are ignored."""

    not_found: str | Promise  # %(id)s: the sale's id
    not_bookable_title: str | Promise
    class_not_sold_title: str | Promise
    class_not_sold: str | Promise  # %(id)s, %(class)s
    no_such_seat: str | Promise  # %(seats)s
    sold_out: str | Promise  # %(fare)s: the class's label
    hold_limit: str | Promise  # %(limit)d
    not_charged: str | Promise  # paying a closed sale: nothing was charged
    # Refund quotes (payments.selectors.refund_percent):
    refund_called_off: str | Promise  # the seller cancelled it: full refund
    refund_begun: str | Promise  # it has begun: no cancellation
    refund_full: str | Promise  # %(days)d
    refund_partial: str | Promise  # %(days)d, %(percent)d
    refund_none: str | Promise  # %(hours)d
    # A payment that arrived after the sale closed (refunded in full): title and detail.
    closed_refunded_title: str | Promise = CLOSED_REFUNDED_TITLE
    closed_refunded: str | Promise = CLOSED_REFUNDED
    # The problem `type` slugs this catalogue answers with where they differ from the
    # sale-neutral ones: (neutral, its own).  Flights keep the slugs their clients know
    # ("flight-not-bookable"); docs/security.md and the OpenAPI schema list them.
    problem_types: tuple[tuple[str, str], ...] = ()

    def problem_type(self, neutral: str) -> str:
        return dict(self.problem_types).get(neutral, neutral)


@dataclass(frozen=True)
class TicketFace:
    """What one ticket says to people, in the current language: the PDF, the tickets page, the
    e-mail and the gate all print these words.  The engine lays them out; the catalogue that
    sold the ticket chooses them (a boarding pass, an entry ticket)."""

    heading: str  # "E-ticket / Boarding pass", "Entry ticket"
    title: str  # the PDF's title: "Boarding pass VN213 12A"
    rows: list[tuple[str, str]]  # (label, value) in print order
    place: str  # where the holder goes, one line: "seat 12A", "Stalls, row F, seat 7"
    fare: str  # what was bought, one line: "Economy", "A — Front stalls"
    file_stem: str  # download name without extension: "boarding-pass-VN213-12A"
    footer: str  # "Show this code at the gate. It is valid once."
    download: str  # the PDF link: "Download boarding pass (PDF)"
    qr_alt: str  # the QR image's text alternative: "QR code of the ticket of Ana, seat 12A"


@dataclass(frozen=True)
class GateEntry:
    """A catalogue item whose tickets a gate may be scanning now (a flight boarding, an event
    letting people in), as the gate page lists it."""

    ref: int  # the catalogue item's id (flightId, eventId)
    sale_id: int
    label: str  # "SK901 SGN→HAN", "Hamlet · Opera House, Berlin"
    starts_at: datetime
    time_zone: str  # IANA name of the place, for the local time


class Catalogue(Protocol):
    #: The reverse accessor from Sale to the catalogue item ("flight", "event"): the engine
    #: reaches it through select_related("sale__<owner>") so the rule costs no extra query.
    #: None if the catalogue's rule needs no row of its own.
    owner: str | None
    #: select_related() paths below the owner item that its ticket face and descriptions read
    #: ("origin", "destination" of a flight), so pages listing tickets name no catalogue model.
    owner_details: tuple[str, ...]
    #: Whether seatless units beyond the seats (overbooking) may be sold.
    allows_overbooking: bool
    #: The lookup from a Passenger to the time they checked in before the day (a flight's
    #: online check-in), which orders standby (bookings.seating.standby_order); None: none.
    checkin_time_path: str | None
    #: Admin search lookups from a Sale into its item ("<owner>__code", "=<owner>__id").
    search_fields: tuple[str, ...]
    #: What its seat numbers look like ("12A"; "B-12-7"): malformed ones are refused unread.
    seat_no_pattern: re.Pattern[str]
    #: The inventory-class codes it sells (FareClass values), or None for codes chosen per
    #: sale (price categories).
    class_codes: tuple[str, ...] | None
    #: The class a front door assumes when a request names none (a flight's ECONOMY), or None:
    #: the request must name one.
    default_class: str | None
    #: How the engine's errors name this catalogue's sales.
    texts: SaleTexts
    #: The 404 problem for an id of ours that sells nothing (SaleNotFound, EventNotFound).
    not_found_error: type[DomainError]
    #: Whether `is_open` and `sells_seatless` have their SQL copy in the seatless hold's
    #: function (migration bookings 0026; proven equal by tests/bookings/
    #: test_one_statement_hold.py).  A catalogue without it (a stand-in) keeps its rules in
    #: Python and the hold in a transaction of its own (`rules_in_hold_function` below).
    rules_in_hold_function: bool

    def is_open(self, sale: Sale, *, now: datetime) -> bool:
        """THE rule: may units of this sale be held or sold at `now`?"""
        ...

    def open_q(self, *, now: datetime, prefix: str = "") -> Q:
        """`is_open` as a filter on sales; `prefix` reaches the Sale through a relation."""
        ...

    def closed_detail(self, sale: Sale) -> str:
        """Why `sale` is closed, for the customer."""
        ...

    def describe(self, sale: Sale) -> SaleSummary: ...

    def metric_label(self, sale: Sale) -> str:
        """A short, stable name of `sale` for metric labels and logs: "VN213#12" (code#id).
        `sale` comes with its item (select_related through `owner_paths`)."""
        ...

    def is_called_off(self, sale: Sale) -> bool:
        """Whether the seller cancelled it (a cancelled flight or event): refunds are full."""
        ...

    def has_begun(self, sale: Sale, *, now: datetime) -> bool:
        """Whether it has begun (departed, started): bookings can no longer be cancelled."""
        ...

    def sells_seatless(self, sale: Sale, code: str) -> bool:
        """Whether units of class `code` may be sold without a seat (`hold_seatless`, a
        seatless waitlist offer).  Flights: yes, on every cabin (the overbooking margin, seats
        assigned later).  Events: only standing areas; a seated category is sold by seat."""
        ...

    def class_label(self, code: str) -> str | None:
        """The name of inventory class `code` ("Economy"), or None if it is not one of ours."""
        ...

    def sale_id_for(self, ref: int) -> int | None:
        """The sale of the catalogue item with id `ref` (None: no such item).  Front doors that
        speak the catalogue's ids (`flightId`) reach the engine through this."""
        ...

    def ticket_face(self, ticket: Ticket) -> TicketFace:
        """What `ticket` (one of this catalogue's sales) says, in the current language."""
        ...

    def gate_entries(self, *, query: str, now: datetime, limit: int) -> list[GateEntry]:
        """What a gate may be scanning tickets for at `now`, soonest first; `query` narrows."""
        ...

    def gate_entry(self, ref: int, *, now: datetime) -> GateEntry | None:
        """Item `ref`, if a gate may scan its tickets at `now` (None: no such item, or not
        now)."""
        ...

    def describe_class(self, sale: Sale, code: str) -> str:
        """What inventory class `code` of `sale` is, for people: "Economy", "Category A —
        Front stalls", "Standing — Floor".  Pages and tickets show it."""
        ...

    def require_seat_conditions(
        self, sale_id: int, seat_numbers: list[str], *, confirmed: bool
    ) -> None:
        """Refuse (a DomainError) seats of sale `sale_id` that carry conditions the customer has
        not confirmed (a flight's exit rows); nothing for catalogues without such seats."""
        ...

    def seats_with_conditions(self, sale: Sale, seat_numbers: Iterable[str]) -> list[str]:
        """Which of `seat_numbers` carry conditions to confirm (a flight's exit rows), read from
        `sale` and its item as `owner_paths` loads them (no query); [] if none can."""
        ...

    def conditions_confirmation_url(self, booking_id: int) -> str | None:
        """Where a paid booking's customer confirms its seats' conditions (a flight: online
        check-in); None for catalogues without such seats."""
        ...


_registry: dict[str, Catalogue] = {}


def register(kind: SaleKind | str, catalogue: Catalogue) -> None:
    _registry[str(kind)] = catalogue


def for_kind(kind: SaleKind | str) -> Catalogue:
    try:
        return _registry[str(kind)]
    except KeyError:
        raise LookupError(f"No catalogue is registered for {kind!r} sales.") from None


def for_sale(sale: Sale) -> Catalogue:
    return for_kind(sale.kind)


_kind_of = SettledColumn(Sale, "kind")  # a sale's kind never changes


def require_seat_conditions(sale_id: int, seat_numbers: list[str], *, confirmed: bool) -> None:
    """The sale's catalogue refuses seats whose conditions are not confirmed (a flight's exit
    rows); no such sale: nothing here (the hold answers that)."""
    kind = _kind_of(sale_id)
    if kind is not None:
        for_kind(kind).require_seat_conditions(sale_id, seat_numbers, confirmed=confirmed)


def seats_with_conditions(sale: Sale, seat_numbers: Iterable[str]) -> list[str]:
    """The seats of `seat_numbers` whose conditions a customer must confirm (exit rows)."""
    return for_sale(sale).seats_with_conditions(sale, seat_numbers)


def conditions_confirmation_url(sale: Sale, booking_id: int) -> str | None:
    return for_sale(sale).conditions_confirmation_url(booking_id)


def texts_of_sale(sale_id: int) -> SaleTexts | None:
    """The texts of the catalogue selling `sale_id` (None: no such sale).  Error paths ask;
    a sale's kind never changes, so it is remembered per process after one small query
    (a sold-out answer from the Redis filter stays free of queries after the first)."""
    kind = _kind_of(sale_id)
    return None if kind is None else for_kind(kind).texts


def owner_paths(prefix: str = "") -> list[str]:
    """select_related() paths from `prefix` (ending at a Sale) to every catalogue item."""
    return [f"{prefix}{c.owner}" for c in _registry.values() if c.owner]


def detail_paths(prefix: str = "") -> list[str]:
    """select_related() paths from `prefix` (ending at a Sale) through each catalogue item to
    what its catalogue reads to describe the sale (`owner_details`): the engine's reads of
    tickets and waitlist entries name no catalogue model this way."""
    return [
        f"{prefix}{c.owner}__{detail}"
        for c in _registry.values()
        if c.owner
        for detail in c.owner_details
    ]


def known_class_codes() -> set[str] | None:
    """Every inventory-class code some catalogue sells; None if any catalogue takes any code."""
    codes: set[str] = set()
    for c in _registry.values():
        if c.class_codes is None:
            return None
        codes.update(c.class_codes)
    return codes


def search_fields(prefix: str = "") -> list[str]:
    """Every catalogue's admin search lookups, reached from `prefix` (ending at a Sale)."""
    fields = []
    for c in _registry.values():
        for lookup in c.search_fields:
            op = lookup[0] if lookup[0] in "=^@" else ""
            fields.append(f"{op}{prefix}{lookup[len(op) :]}")
    return fields


def is_seat_no(seat_no: str) -> bool:
    """Whether `seat_no` is a well-formed seat number of some catalogue."""
    return any(c.seat_no_pattern.fullmatch(seat_no) for c in _registry.values())


def class_label(code: str) -> str:
    """How people see an inventory-class code, from the catalogue that knows it."""
    for c in _registry.values():
        label = c.class_label(code)
        if label:
            return label
    return code


def class_choices(kind: SaleKind | str | None = None) -> list[tuple[str, str]]:
    """(code, label) of every fixed inventory-class code (of `kind`'s catalogue only, if
    given), for the front doors' choice fields.

    Read when a front-door module is imported, which happens after every AppConfig.ready():
    an empty registry then means an import-order bug, refused loudly."""
    if not _registry:
        raise LookupError("No catalogue is registered yet (imported before apps were ready?).")
    catalogues = [for_kind(kind)] if kind is not None else _registry.values()
    return [
        (code, c.class_label(code) or code) for c in catalogues for code in (c.class_codes or ())
    ]


def default_class(kind: SaleKind | str) -> str | None:
    """The class `kind`'s front doors assume when a request names none (None: it must)."""
    return for_kind(kind).default_class


def sale_id_for(kind: SaleKind | str, ref: int) -> int | None:
    """The sale behind catalogue item `ref` of `kind` (a flight id), None if there is none."""
    return for_kind(kind).sale_id_for(ref)


def is_open(sale: Sale, *, now: datetime) -> bool:
    return for_sale(sale).is_open(sale, now=now)


def describe(sale: Sale) -> SaleSummary:
    return for_sale(sale).describe(sale)


def metric_labels(sale_ids: list[int]) -> dict[int, str]:
    """Each sale's metric label (Catalogue.metric_label), in one query."""
    sales = Sale.objects.select_related(*owner_paths()).in_bulk(sale_ids)
    return {pk: for_sale(sale).metric_label(sale) for pk, sale in sales.items()}


def ticket_face(ticket: Ticket) -> TicketFace:
    return for_sale(ticket.sale).ticket_face(ticket)


def owner_item(sale: Sale) -> tuple[str, Any] | None:
    """(owner, item): the catalogue item that owns `sale`, ("flight", <Flight 12>); the front
    doors name a sale to people by it (`flightId`, `eventId`)."""
    owner = for_sale(sale).owner
    item = getattr(sale, owner, None) if owner else None
    return (owner, item) if owner and item is not None else None


def describe_class(sale: Sale, code: str) -> str:
    return for_sale(sale).describe_class(sale, code)


def sells_seatless(sale: Sale, code: str) -> bool:
    return for_sale(sale).sells_seatless(sale, code)


def rules_in_hold_function() -> bool:
    """Whether every registered catalogue's hold rules (sale open, sold without seats) are
    asked by the seatless hold's SQL function itself (bookings.one_statement_hold)."""
    return bool(_registry) and all(
        getattr(c, "rules_in_hold_function", False) for c in _registry.values()
    )


def open_sales_q(*, now: datetime, prefix: str = "") -> Q:
    """Every open sale, whatever its catalogue; matches nothing if none is registered."""
    q = Q(**{f"{prefix}pk__in": []})
    for kind, catalogue in _registry.items():
        q |= Q(**{f"{prefix}kind": kind}) & catalogue.open_q(now=now, prefix=prefix)
    return q
