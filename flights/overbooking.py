"""Overbook limits suggested from the no-shows gate close measured (docs/departure.md).

For a fare class of a flight, the history is the route's (same origin, destination and fare
class) last `HISTORY_FLIGHTS` departures with recorded counts (`CabinDeparture`): units sold,
boarded, no-shows.  Volunteers and passengers denied boarding count as shows (they are sold
and not no-shows), so the forecast does not learn from its own denials.  The suggestion is
`show_up_model.suggest_overbook_limit` for the class's capacity, the measured show rate and
the staff's target risk.  Nothing here changes a limit except `accept_overbook_suggestion`,
which staff call from the fare-inventory admin after seeing the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from bookings.inventory import set_fare_limits
from bookings.models import Inventory
from flights import show_up_model
from flights.models import CabinDeparture, Flight
from kernel.errors import InvalidRequest

DEFAULT_TARGET_RISK = 0.05
HISTORY_FLIGHTS = 60
# Fewer departures than this and the rate is noise: no suggestion.
MIN_FLIGHTS = 5


@dataclass(frozen=True)
class NoShowHistory:
    flights: int
    sold: int
    boarded: int
    no_shows: int
    volunteers: int = 0
    denied: int = 0

    @property
    def showed(self) -> int:
        """Everyone sold who was not a no-show: the boarded, the standby and the volunteers
        and denied passengers taken off before the gate (shows, or the forecast would feed
        on its own denials and suggest ever lower limits)."""
        return self.sold - self.no_shows

    @property
    def no_show_rate(self) -> float | None:
        return 1 - self.showed / self.sold if self.sold else None

    @property
    def no_show_percent(self) -> str:
        rate = self.no_show_rate
        return "—" if rate is None else f"{rate * 100:.1f} %"


@dataclass(frozen=True)
class OverbookSuggestion:
    inventory_id: int
    fare_class: str
    capacity: int
    current_limit: int
    target_risk: float
    history: NoShowHistory
    suggested_limit: int | None  # None: not enough history
    current_risk: float | None
    suggested_risk: float | None

    @property
    def changes_limit(self) -> bool:
        return self.suggested_limit is not None and self.suggested_limit != self.current_limit


def no_show_history(*, flight: Flight, fare_class: str) -> NoShowHistory:
    """The route's recorded departures of `fare_class` before `flight`, newest first."""
    records = list(
        CabinDeparture.objects.filter(
            flight__origin_id=flight.origin_id,
            flight__destination_id=flight.destination_id,
            flight__departure_at__lt=flight.departure_at,
            fare_class=fare_class,
        )
        .order_by("-flight__departure_at")
        .values_list("sold", "boarded", "no_shows", "volunteers", "denied")[:HISTORY_FLIGHTS]
    )
    return NoShowHistory(
        flights=len(records),
        sold=sum(r[0] for r in records),
        boarded=sum(r[1] for r in records),
        no_shows=sum(r[2] for r in records),
        volunteers=sum(r[3] for r in records),
        denied=sum(r[4] for r in records),
    )


def check_target_risk(value: object) -> float:
    """A staff-entered target, as a fraction (0.05); refused unless 0 <= target < 0.5."""
    try:
        target = float(value)
    except (TypeError, ValueError):
        raise InvalidRequest("The target risk is a number, e.g. 0.05 for 5 %.") from None
    if not 0.0 <= target < 0.5:
        raise InvalidRequest("The target risk must be at least 0 and below 0.5 (50 %).")
    return target


def suggest_overbook_limit(
    *, inventory: Inventory, target_risk: float = DEFAULT_TARGET_RISK
) -> OverbookSuggestion:
    flight = inventory.sale.flight  # the route and date: columns of the flight row itself
    history = no_show_history(flight=flight, fare_class=inventory.fare_class)
    suggested = current_risk = suggested_risk = None
    if history.flights >= MIN_FLIGHTS and history.sold:
        show_rate = 1 - history.no_show_rate
        suggested = show_up_model.suggest_overbook_limit(
            capacity=inventory.capacity, show_rate=show_rate, target_risk=target_risk
        )
        current_risk = show_up_model.denied_boarding_risk(
            capacity=inventory.capacity,
            sold=inventory.capacity + inventory.overbook_limit,
            show_rate=show_rate,
        )
        suggested_risk = show_up_model.denied_boarding_risk(
            capacity=inventory.capacity, sold=inventory.capacity + suggested, show_rate=show_rate
        )
    return OverbookSuggestion(
        inventory_id=inventory.pk,
        fare_class=inventory.fare_class,
        capacity=inventory.capacity,
        current_limit=inventory.overbook_limit,
        target_risk=target_risk,
        history=history,
        suggested_limit=suggested,
        current_risk=current_risk,
        suggested_risk=suggested_risk,
    )


def accept_overbook_suggestion(*, inventory_id: int, shown_limit: int, target_risk: float) -> int:
    """Set the class's overbook limit to the suggestion the staff member saw (`shown_limit`).

    Refused when the suggestion is no longer that number (new departures came in, capacity
    changed): staff confirm what they saw, never a value computed after they looked.  The
    write is the engine's `set_fare_limits` (it refuses a limit below what is sold and held).
    Returns the new limit."""
    with transaction.atomic():
        inventory = (
            Inventory.objects.select_for_update(of=("self",))
            .select_related("sale__flight")
            .filter(pk=inventory_id)
            .first()
        )
        if inventory is None:
            raise InvalidRequest("No such fare class.")
        suggestion = suggest_overbook_limit(inventory=inventory, target_risk=target_risk)
        if suggestion.suggested_limit is None:
            raise InvalidRequest("Not enough departed flights on this route for a suggestion.")
        if suggestion.suggested_limit != shown_limit:
            raise InvalidRequest(
                f"The suggestion changed from {shown_limit} to {suggestion.suggested_limit} "
                "since it was shown; review it again."
            )
        set_fare_limits(
            inventory_id=inventory.pk,
            capacity=inventory.capacity,
            overbook_limit=shown_limit,
            price=inventory.price,
        )
    return shown_limit
