"""Reads of bookings, always scoped to who is asking.

`access_booking` is the only way the interfaces fetch one booking: it answers "not found" for
someone else's booking, so nobody can learn that a booking id exists.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Prefetch, QuerySet

from bookings.errors import BookingNotFound
from bookings.models import Booking, Passenger

BOOK_ON_BEHALF = "bookings.book_on_behalf"


def acts_for_customers(user: AbstractBaseUser) -> bool:
    """Travel agents and staff: may book for, see and cancel other customers' bookings."""
    return user.has_perm(BOOK_ON_BEHALF)


def _with_details(bookings: QuerySet[Booking]) -> QuerySet[Booking]:
    return bookings.select_related("flight").prefetch_related(
        Prefetch("passengers", queryset=Passenger.objects.select_related("seat").order_by("id"))
    )


def bookings_of(*, customer: AbstractBaseUser) -> QuerySet[Booking]:
    """The customer's own bookings, newest first."""
    return _with_details(Booking.objects.filter(customer=customer)).order_by("-created_at", "-id")


def access_booking(*, user: AbstractBaseUser, booking_id: int) -> Booking:
    bookings = Booking.objects.filter(pk=booking_id)
    if not acts_for_customers(user):
        bookings = bookings.filter(customer=user)
    booking = _with_details(bookings).first()
    if booking is None:
        raise BookingNotFound(f"You have no booking {booking_id}.")
    return booking


def active_customer(*, customer_id: int) -> AbstractBaseUser | None:
    return get_user_model().objects.filter(pk=customer_id, is_active=True).first()
