"""`{% load departure %}` on the booking page (storefront's, which does not know flights):
the day of departure's news for one booking, an open volunteer offer and what was decided."""

from __future__ import annotations

from django import template

from flights.models import DeniedBoarding, OfferStatus, VolunteerOffer

register = template.Library()


@register.simple_tag
def departure_news(booking) -> dict:
    """`{% departure_news booking as news %}`: `offers` open to this booking's passengers and
    `denied` (the passengers who do not fly, with their compensation and new booking)."""
    return {
        "offers": list(
            VolunteerOffer.objects.filter(booking=booking, status=OfferStatus.OFFERED)
            .select_related("passenger", "flight")
            .order_by("id")
        ),
        "denied": list(
            DeniedBoarding.objects.filter(booking=booking)
            .select_related("passenger", "compensation", "rebooked_onto")
            .order_by("id")
        ),
    }
