"""Distances between airports: the great circle on a spherical Earth.

Regulation (EC) No 261/2004 Art. 7(4) measures flights "by the great circle route method";
a sphere of the mean Earth radius is how that method is applied in practice (the bands are
hundreds of kilometres wide, so the ellipsoid's fraction of a per cent never matters)."""

from __future__ import annotations

import math
from decimal import Decimal

# IUGG mean Earth radius, kilometres.
EARTH_RADIUS_KM = 6371.0088

Degrees = float | Decimal


def great_circle_km(lat1: Degrees, lon1: Degrees, lat2: Degrees, lon2: Degrees) -> float:
    """The great-circle distance in kilometres between two points given in degrees
    (haversine formula: stable for short and antipodal distances alike)."""
    phi1, phi2 = math.radians(float(lat1)), math.radians(float(lat2))
    d_phi = phi2 - phi1
    d_lambda = math.radians(float(lon2) - float(lon1))
    h = math.sin(d_phi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(d_lambda / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def airport_distance_km(origin, destination) -> float | None:
    """The distance between two airports (anything with `latitude`/`longitude`); None when
    either lacks coordinates."""
    points = (origin.latitude, origin.longitude, destination.latitude, destination.longitude)
    if any(value is None for value in points):
        return None
    return great_circle_km(*points)
