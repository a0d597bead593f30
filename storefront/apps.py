from django.apps import AppConfig


class StorefrontConfig(AppConfig):
    """The booking journey's front doors, shared by every catalogue: the hold, booking,
    ticket and gate pages, the bookings and tickets API, and the Booking admin.  They sit
    above payments and the waiting room and call their services; the engine (bookings/)
    keeps the models and the rules."""

    name = "storefront"
