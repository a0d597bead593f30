"""Denied-boarding compensation under Regulation (EC) No 261/2004: the one place its rules live.

Art. 3(1), scope: a passenger departing from an airport in the territory of a Member State,
or departing from outside it to such an airport on a Community (EU) carrier.
Art. 7(1), amount by great-circle distance (Art. 7(4)): EUR 250 for 1,500 km or less;
EUR 400 for intra-Community flights over 1,500 km and other flights over 1,500 up to 3,500 km;
EUR 600 for all others.
Art. 7(2), reduction: halved when the passenger is rerouted (Art. 8) and arrives no more than
2, 3 or 4 hours after the planned arrival, for those same three bands.  A passenger who takes
the refund (Art. 8(1)(a)) gets the full amount.

The rule is pure (countries, distance, remedy in; euros out) so every band and boundary is
tested without a database; `assess_flight` reads a Flight's airports and carrier into it.
docs/departure.md cites the articles and states where each invariant is enforced.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.db import models
from django.utils.translation import gettext_lazy as _

from flights.geo import airport_distance_km

# The 27 Member States, plus the EEA states (Iceland, Liechtenstein, Norway: EEA Agreement,
# Annex XIII) and Switzerland (EU-Swiss Air Transport Agreement), where the regulation applies.
MEMBER_STATES = frozenset({
    "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE",
    "IT", "LV", "LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE",
})  # fmt: skip
REGULATION_COUNTRIES = MEMBER_STATES | frozenset({"IS", "LI", "NO", "CH"})

SHORT_HAUL_KM = 1500  # Art. 7(1)(a): "1 500 kilometres or less"
MEDIUM_HAUL_KM = 3500  # Art. 7(1)(b): "between 1 500 and 3 500 kilometres"


class Remedy(models.TextChoices):
    """What the denied passenger chose under Art. 8(1)."""

    REFUND = "REFUND", _("Refund of the ticket (Art. 8(1)(a))")
    REROUTING = "REROUTING", _("Rerouting to the final destination (Art. 8(1)(b))")


@dataclass(frozen=True)
class Band:
    article: str
    amount: Decimal
    # Art. 7(2): a rerouted arrival at most this late halves the amount.
    reduction_within: timedelta


SHORT = Band("Art. 7(1)(a)", Decimal("250.00"), timedelta(hours=2))
MEDIUM = Band("Art. 7(1)(b)", Decimal("400.00"), timedelta(hours=3))
LONG = Band("Art. 7(1)(c)", Decimal("600.00"), timedelta(hours=4))
CURRENCY = "EUR"


def is_regulation_country(country: str) -> bool:
    return country.upper() in REGULATION_COUNTRIES


def in_scope(*, origin_country: str, destination_country: str, carrier_is_eu: bool) -> bool:
    """Art. 3(1): (a) departing from an EU airport, whoever flies; (b) arriving at one from
    outside, only on an EU carrier."""
    if is_regulation_country(origin_country):
        return True
    return is_regulation_country(destination_country) and carrier_is_eu


def band_for(*, distance_km: float, intra_eu: bool) -> Band:
    """Art. 7(1): the band of a flight of `distance_km`; `intra_eu` when both airports are in
    the regulation's territory (an intra-Community flight is never in the EUR 600 band)."""
    if distance_km <= SHORT_HAUL_KM:
        return SHORT
    if intra_eu or distance_km <= MEDIUM_HAUL_KM:
        return MEDIUM
    return LONG


def compensation(
    *,
    distance_km: float,
    intra_eu: bool,
    remedy: Remedy,
    rerouted_arrival_delay: timedelta | None = None,
) -> Decimal:
    """The amount owed (EUR) to a passenger denied boarding against their will.

    `rerouted_arrival_delay` is how much later than the planned arrival the rerouting
    arrives (negative: earlier); it is required with REROUTING.  Art. 7(2) says "may" reduce:
    the operator here always applies the reduction the regulation allows.
    """
    band = band_for(distance_km=distance_km, intra_eu=intra_eu)
    if remedy == Remedy.REFUND:
        return band.amount
    if rerouted_arrival_delay is None:
        raise ValueError("A rerouting needs its arrival delay to decide the Art. 7(2) reduction.")
    if rerouted_arrival_delay <= band.reduction_within:
        return (band.amount / 2).quantize(Decimal("0.01"))
    return band.amount


@dataclass(frozen=True)
class Assessment:
    """What the regulation says about one flight: covered or not, and its band."""

    in_scope: bool
    distance_km: float | None
    intra_eu: bool
    band: Band | None

    def amount(self, *, remedy: Remedy, rerouted_arrival_delay: timedelta | None = None) -> Decimal:
        """The compensation for a passenger of this flight; 0 outside the regulation."""
        if not self.in_scope or self.distance_km is None:
            return Decimal("0.00")
        return compensation(
            distance_km=self.distance_km,
            intra_eu=self.intra_eu,
            remedy=remedy,
            rerouted_arrival_delay=rerouted_arrival_delay,
        )


def assess_flight(flight) -> Assessment:
    """The regulation applied to a Flight (its airports' countries and coordinates, its
    carrier).  An unknown carrier counts as non-EU; an airport without coordinates leaves the
    distance unknown, so no amount can be computed (staff must fill the coordinates in)."""
    origin, destination = flight.origin, flight.destination
    carrier_is_eu = bool(flight.carrier_id and flight.carrier.is_eu_carrier)
    covered = in_scope(
        origin_country=origin.country,
        destination_country=destination.country,
        carrier_is_eu=carrier_is_eu,
    )
    intra_eu = is_regulation_country(origin.country) and is_regulation_country(destination.country)
    distance = airport_distance_km(origin, destination)
    band = band_for(distance_km=distance, intra_eu=intra_eu) if distance is not None else None
    return Assessment(in_scope=covered, distance_km=distance, intra_eu=intra_eu, band=band)
