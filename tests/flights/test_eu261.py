"""EU 261 denied-boarding compensation: scope (Art. 3), bands (Art. 7(1)), the reduction for
a rerouting that arrives in time (Art. 7(2)), and the great-circle distance (Art. 7(4))."""

import importlib
from datetime import timedelta
from decimal import Decimal

import pytest
from django.apps import apps

from flights.eu261 import LONG, MEDIUM, SHORT, Remedy, assess_flight, band_for, compensation
from flights.eu261 import in_scope as covered
from flights.geo import EARTH_RADIUS_KM, great_circle_km
from flights.models import Airport, Carrier, Flight
from tests.factories import AirportFactory, FlightFactory

HOUR = timedelta(hours=1)
SECOND = timedelta(seconds=1)


# --- distance ---------------------------------------------------------------------------------


def test_a_quarter_of_the_equator_is_a_quarter_of_the_circumference():
    assert great_circle_km(0, 0, 0, 90) == pytest.approx(EARTH_RADIUS_KM * 3.141592653589793 / 2)


def test_antipodes_are_half_the_circumference_and_a_point_is_zero_from_itself():
    assert great_circle_km(0, 0, 0, 180) == pytest.approx(EARTH_RADIUS_KM * 3.141592653589793)
    assert great_circle_km(10, 20, 10, 20) == 0


def test_one_degree_of_latitude_is_about_111_km_whatever_the_longitude():
    assert great_circle_km(45, 7, 46, 7) == pytest.approx(111.195, abs=0.01)


def test_frankfurt_to_berlin_is_a_short_flight():
    # 50.0333 N 8.5706 E to 52.3667 N 13.5033 E: ~430 km, as airline distance tables give.
    assert great_circle_km(50.0333, 8.57056, 52.3667, 13.5033) == pytest.approx(430.5, abs=1)


# --- Art. 3: scope ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("origin", "destination", "eu_carrier", "expected"),
    [
        ("DE", "VN", False, True),  # (a) departing from the EU: any carrier
        ("DE", "DE", False, True),
        ("VN", "DE", True, True),  # (b) arriving in the EU on an EU carrier
        ("VN", "DE", False, False),  # arriving on a non-EU carrier: not covered
        ("VN", "RU", True, False),  # neither end in the EU
        ("NO", "VN", False, True),  # EEA: the regulation applies there too
        ("CH", "US", False, True),
        ("GB", "DE", False, False),  # the UK left: its own regulation, not this one
        ("de", "vn", False, True),  # country codes read case-insensitively
    ],
)
def test_scope_of_article_3(origin, destination, eu_carrier, expected):
    assert (
        covered(origin_country=origin, destination_country=destination, carrier_is_eu=eu_carrier)
        is expected
    )


# --- Art. 7(1): bands -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("distance", "intra_eu", "band"),
    [
        (0, False, SHORT),
        (1500, False, SHORT),  # "1 500 kilometres or less"
        (1500, True, SHORT),
        (1500.001, False, MEDIUM),
        (1500.001, True, MEDIUM),
        (3500, False, MEDIUM),  # "between 1 500 and 3 500": 3,500 itself is still (b)
        (3500.001, False, LONG),
        (3500.001, True, MEDIUM),  # intra-Community over 1,500 km: (b) at any length
        (9000, True, MEDIUM),
        (9000, False, LONG),
    ],
)
def test_band_by_distance(distance, intra_eu, band):
    assert band_for(distance_km=distance, intra_eu=intra_eu) == band


def test_the_bands_carry_the_regulations_amounts_and_reduction_windows():
    assert [(b.amount, b.reduction_within) for b in (SHORT, MEDIUM, LONG)] == [
        (Decimal("250.00"), 2 * HOUR),
        (Decimal("400.00"), 3 * HOUR),
        (Decimal("600.00"), 4 * HOUR),
    ]


# --- Art. 7(2): the reduction -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("distance", "intra_eu", "window", "full"),
    [
        (1000, False, 2 * HOUR, Decimal("250.00")),
        (2000, True, 3 * HOUR, Decimal("400.00")),
        (3000, False, 3 * HOUR, Decimal("400.00")),
        (5000, True, 3 * HOUR, Decimal("400.00")),
        (5000, False, 4 * HOUR, Decimal("600.00")),
    ],
)
def test_rerouting_within_the_window_halves_and_one_second_later_does_not(
    distance, intra_eu, window, full
):
    def owed(delay):
        return compensation(
            distance_km=distance,
            intra_eu=intra_eu,
            remedy=Remedy.REROUTING,
            rerouted_arrival_delay=delay,
        )

    assert owed(window) == full / 2  # "does not exceed": the boundary itself is reduced
    assert owed(window - SECOND) == full / 2
    assert owed(-HOUR) == full / 2  # arriving earlier than planned
    assert owed(window + SECOND) == full
    assert owed(24 * HOUR) == full


@pytest.mark.parametrize("distance", [100, 1500, 2500, 3500, 8000])
def test_a_refund_gets_the_full_amount_however_the_passenger_would_have_arrived(distance):
    amount = compensation(distance_km=distance, intra_eu=False, remedy=Remedy.REFUND)

    assert amount == band_for(distance_km=distance, intra_eu=False).amount
    assert amount == compensation(
        distance_km=distance, intra_eu=False, remedy=Remedy.REFUND, rerouted_arrival_delay=HOUR
    )


def test_a_rerouting_without_its_arrival_cannot_be_priced():
    with pytest.raises(ValueError, match="arrival delay"):
        compensation(distance_km=800, intra_eu=True, remedy=Remedy.REROUTING)


# --- a flight's airports and carrier ----------------------------------------------------------


def airport(code, country, lat, lon, tz="Europe/Berlin"):
    return AirportFactory(
        code=code, country=country, latitude=Decimal(lat), longitude=Decimal(lon), time_zone=tz
    )


@pytest.fixture
def airports(db):
    # The carriers the migration knows; a transactional test before this one may have flushed
    # them, as it flushes every table.
    Carrier.objects.update_or_create(
        code="LH", defaults={"name": "Lufthansa", "is_eu_carrier": True}
    )
    Carrier.objects.update_or_create(
        code="VN", defaults={"name": "Vietnam Airlines", "is_eu_carrier": False}
    )
    return {
        "FRA": airport("FRA", "DE", "50.03330", "8.57056"),
        "BER": airport("BER", "DE", "52.36670", "13.50330"),
        "SGN": airport("SGN", "VN", "10.81880", "106.65190", "Asia/Ho_Chi_Minh"),
        "HAN": airport("HAN", "VN", "21.22120", "105.80720", "Asia/Ho_Chi_Minh"),
    }


@pytest.mark.django_db
def test_a_domestic_german_flight_is_covered_at_250(airports):
    flight = FlightFactory(code="LH190", origin=airports["FRA"], destination=airports["BER"])

    assessed = assess_flight(flight)

    assert flight.carrier_id == "LH"  # from the flight number
    assert (assessed.in_scope, assessed.intra_eu, assessed.band) == (True, True, SHORT)
    assert assessed.amount(remedy=Remedy.REFUND) == Decimal("250.00")
    assert assessed.amount(remedy=Remedy.REROUTING, rerouted_arrival_delay=HOUR) == Decimal(
        "125.00"
    )


@pytest.mark.django_db
def test_arriving_in_the_eu_counts_only_on_an_eu_carrier(airports):
    # LH and VN: the carriers the migration knows (Lufthansa EU, Vietnam Airlines not).
    on_lh = FlightFactory(code="LH773", origin=airports["SGN"], destination=airports["FRA"])
    on_vn = FlightFactory(code="VN31", origin=airports["SGN"], destination=airports["FRA"])

    assert assess_flight(on_lh).in_scope and assess_flight(on_lh).band == LONG
    assert assess_flight(on_lh).amount(remedy=Remedy.REFUND) == Decimal("600.00")
    assert not assess_flight(on_vn).in_scope
    assert assess_flight(on_vn).amount(remedy=Remedy.REFUND) == Decimal("0.00")


@pytest.mark.django_db
def test_a_flight_outside_the_eu_owes_nothing_and_an_unknown_carrier_counts_as_non_eu(airports):
    domestic = FlightFactory(code="SK1", origin=airports["SGN"], destination=airports["HAN"])
    inbound = FlightFactory(code="SK2", origin=airports["SGN"], destination=airports["BER"])

    assert domestic.carrier_id is None
    assert not assess_flight(domestic).in_scope
    assert not assess_flight(inbound).in_scope
    assert assess_flight(domestic).amount(remedy=Remedy.REFUND) == Decimal("0.00")


@pytest.mark.django_db
def test_an_airport_without_coordinates_leaves_the_amount_unknown_not_guessed():
    flight = FlightFactory(
        code="SK3",
        origin=AirportFactory(code="MUC", country="DE"),
        destination=AirportFactory(code="BER", country="DE"),
    )

    assessed = assess_flight(flight)

    assert assessed.in_scope and assessed.distance_km is None and assessed.band is None
    assert assessed.amount(remedy=Remedy.REFUND) == Decimal("0.00")


@pytest.mark.django_db
def test_the_coordinates_must_come_in_pairs_and_in_range():
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        AirportFactory(code="AAA", latitude=Decimal("10"), longitude=None)
    with pytest.raises(IntegrityError), transaction.atomic():
        AirportFactory(code="AAB", latitude=Decimal("91"), longitude=Decimal("0"))
    assert AirportFactory(code="AAC", latitude=Decimal("-90"), longitude=Decimal("180"))


@pytest.mark.django_db
def test_the_migration_fills_the_known_airports_and_links_flights_to_carriers():
    migration = importlib.import_module("flights.migrations.0007_airport_coordinates_carriers")
    Carrier.objects.all().delete()  # the migration's own rows: start as before it ran
    fra = AirportFactory(code="FRA", country="DE")
    ber = AirportFactory(code="BER", country="DE")
    flight = FlightFactory(code="LH190", origin=fra, destination=ber)
    assert flight.carrier_id is None  # no carrier rows yet

    migration.fill_known_airports_and_carriers(apps, None)

    fra.refresh_from_db()
    flight.refresh_from_db()
    assert (fra.latitude, fra.longitude) == (Decimal("50.03330"), Decimal("8.57056"))
    assert flight.carrier_id == "LH" and Carrier.objects.get(code="LH").is_eu_carrier
    assert not Carrier.objects.get(code="SU").is_eu_carrier
    assert Airport.objects.filter(latitude__isnull=True).count() == 0
    assert Flight.objects.filter(carrier__isnull=True).count() == 0
