"""The sale engine's domain errors.  Each names the problem it is (RFC 9457 `type` slug), the
HTTP status the API answers with, and a human message that pages can show as is.  The base
class and the generic errors (invalid request, too busy, Idempotency-Key) are kernel.errors."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.core.signals import setting_changed
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

# The waitlist's and resale's errors have their own module; importable from here like the rest.
from bookings.waitlist_errors import (  # noqa: F401
    AlreadyWaiting,
    NotForResale,
    NotSoldOut,
    NotWaiting,
    NotYourTickets,
    ResaleBusy,
    ResaleListed,
    ResaleNotFound,
)
from kernel.errors import DomainError

if TYPE_CHECKING:
    from bookings.catalogue import SaleTexts

# The errors below that name what is sold take the selling catalogue's `texts`
# (bookings.catalogue.SaleTexts: "on this flight", "for this event"); without them they speak
# neutrally ("is sold out").  Their `code` (the problem `type` slug) is sale-neutral
# ("sale-not-bookable"); given `texts`, it is the catalogue's own where that differs
# (flights keep "flight-not-bookable", SaleTexts.problem_types).


def _catalogue_type(error: DomainError, texts: SaleTexts | None) -> None:
    if texts is not None:
        error.code = texts.problem_type(type(error).code)


class SaleNotFound(DomainError):
    """No such sale (or no such catalogue item, e.g. a flight id): its `type` slug and title
    are the ones clients have known since flights were the only sale."""

    status = 404
    code = "flight-not-found"
    title = _("Flight not found")


class FareClassNotFound(DomainError):
    status = 400
    code = "class-not-sold"  # flights: "fare-class-not-found"
    title = _("This sale does not sell that class")

    def __init__(
        self, detail: str | None = None, *, texts: SaleTexts | None = None, **extra: object
    ) -> None:
        if texts is not None:
            self.title = texts.class_not_sold_title
        _catalogue_type(self, texts)
        super().__init__(detail, **extra)


class SeatNotFound(DomainError):
    status = 400
    code = "seat-not-found"
    title = _("Unknown seat")

    def __init__(
        self,
        seats: Iterable[str],
        detail: str | None = None,
        *,
        texts: SaleTexts | None = None,
    ) -> None:
        seats = sorted(seats)
        text = str(texts.no_such_seat) if texts else gettext("No such seat: %(seats)s.")
        super().__init__(detail or text % {"seats": ", ".join(seats)}, seats=seats)


class SeatWrongCabin(DomainError):
    status = 400
    code = "seat-wrong-class"  # flights: "seat-wrong-cabin"
    title = _("Seat is not in the chosen class")

    def __init__(
        self, seats: Iterable[str], fare_class: str, *, texts: SaleTexts | None = None
    ) -> None:
        seats = sorted(seats)
        _catalogue_type(self, texts)
        super().__init__(
            gettext("Seat %(seats)s is not sold in %(fare)s.")
            % {"seats": ", ".join(seats), "fare": fare_class},
            seats=seats,
        )


class SeatsRequired(DomainError):
    """A seatless hold of a class its catalogue sells only by seat (an event's seated
    category: only standing areas are sold by count)."""

    status = 400
    code = "seats-required"
    title = _("Choose the seats")

    def __init__(self, fare_class: str) -> None:
        super().__init__(
            gettext(
                "%(class)s is sold by seat: choose the seats (`seats`). Only a standing area "
                "is booked by a number of places (`passengers`)."
            )
            % {"class": fare_class},
            fareClass=fare_class,
        )


class SaleClosed(DomainError):
    """The sale is closed (the flight departed, the event started or was cancelled)."""

    status = 409
    code = "sale-not-bookable"  # flights: "flight-not-bookable"
    title = _("This can no longer be booked")

    def __init__(
        self, detail: str | None = None, *, texts: SaleTexts | None = None, **extra: object
    ) -> None:
        if texts is not None:
            self.title = texts.not_bookable_title
        _catalogue_type(self, texts)
        super().__init__(detail, **extra)


class SeatUnavailable(DomainError):
    status = 409
    code = "seat-unavailable"
    title = _("Seat just taken")

    def __init__(self, seats: Iterable[str]) -> None:
        seats = sorted(seats)
        super().__init__(
            gettext("Seat %(seats)s was just taken by someone else. Please pick another.")
            % {"seats": ", ".join(seats)},
            seats=seats,
        )


class SeatBlocked(SeatUnavailable):
    """A seat staff took out of sale (blocked): not "taken by someone else".  A kind of
    SeatUnavailable, so whatever handles that handles this."""

    code = "seat-blocked"  # flights: "seat-unavailable", as before
    title = _("Seat not for sale")

    def __init__(self, seats: Iterable[str], *, texts: SaleTexts | None = None) -> None:
        seats = sorted(seats)
        _catalogue_type(self, texts)
        DomainError.__init__(
            self,
            gettext("Seat %(seats)s is not for sale. Please pick another.")
            % {"seats": ", ".join(seats)},
            seats=seats,
        )


class SoldOut(DomainError):
    status = 409
    code = "sold-out"

    def __init__(
        self, fare_class: str, *, texts: SaleTexts | None = None, sale_id: int | None = None
    ) -> None:
        # Written when first read: the Redis filter refuses a sold-out hold without any query,
        # and naming the sale's catalogue may take one (`sale_id` instead of `texts`).
        self.fare_class, self.texts, self.sale_id = fare_class, texts, sale_id
        self.extra = {"fareClass": fare_class}
        Exception.__init__(self, fare_class)

    @property
    def detail(self) -> str:
        texts = self.texts
        if texts is None and self.sale_id is not None:
            from bookings.catalogue import texts_of_sale

            texts = self.texts = texts_of_sale(self.sale_id)
        return _sold_out_text(texts, self.fare_class)

    @property
    def title(self) -> str:
        return _sold_out_title()

    def __str__(self) -> str:
        return self.detail


# Every loser of a sale gets the same sentence: it is written once per language, catalogue
# and class and then read from here, not translated again for each of them (issue 26).  The
# class is the client's word, so the memo is bounded; a change of the languages or of the
# catalogues' translations (only tests make one) empties it.
_SOLD_OUT_TEXTS: dict[tuple[str | None, int, str], tuple[SaleTexts | None, str]] = {}
SOLD_OUT_TEXTS_KEPT = 256


def _sold_out_text(texts: SaleTexts | None, fare_class: str) -> str:
    key = (get_language(), id(texts), fare_class)
    kept = _SOLD_OUT_TEXTS.get(key)
    if kept is not None and kept[0] is texts:  # the same texts, not a later one at its id
        return kept[1]
    text = str(texts.sold_out) if texts else gettext("%(fare)s is sold out.")
    text %= {"fare": _fare_label(fare_class)}
    if len(_SOLD_OUT_TEXTS) < SOLD_OUT_TEXTS_KEPT:
        _SOLD_OUT_TEXTS[key] = (texts, text)
    return text


# The title too ("Sold out"), once per language: the same for every sold-out answer.
_SOLD_OUT_TITLES: dict[str | None, str] = {}


def _sold_out_title() -> str:
    language = get_language()
    title = _SOLD_OUT_TITLES.get(language)
    if title is None:
        title = gettext("Sold out")
        if len(_SOLD_OUT_TITLES) < SOLD_OUT_TEXTS_KEPT:
            _SOLD_OUT_TITLES[language] = title
    return title


def _forget_sold_out_texts(*, setting: str, **kwargs: object) -> None:
    if setting in {"LANGUAGES", "LANGUAGE_CODE", "LOCALE_PATHS", "INSTALLED_APPS", "USE_I18N"}:
        _SOLD_OUT_TEXTS.clear()
        _SOLD_OUT_TITLES.clear()


setting_changed.connect(_forget_sold_out_texts, dispatch_uid="bookings.errors.sold_out_texts")


class HoldLimitReached(DomainError):
    status = 409
    code = "hold-limit-reached"
    title = _("Too many seats on hold")

    def __init__(self, limit: int, *, texts: SaleTexts | None = None) -> None:
        text = (
            str(texts.hold_limit)
            if texts
            else gettext(
                "You can hold at most %(limit)d places of one sale at a time. Pay for or "
                "cancel a hold you have before holding more."
            )
        )
        super().__init__(text % {"limit": limit}, limit=limit)


class BookingNotFound(DomainError):
    status = 404
    code = "booking-not-found"
    title = _("Booking not found")


class HoldExpired(DomainError):
    status = 410
    code = "hold-expired"
    title = _("Hold expired")
    default = _("Your hold has expired and the seats were released. Please choose again.")

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail or self.default)


class PassengerNamesMissing(DomainError):
    status = 422
    code = "passenger-names-missing"
    title = _("Passenger names missing")
    default = _(
        "Every passenger needs a full name before the booking can be paid: "
        "PUT /api/bookings/{id}/passengers with passengerNames, or fill them in on the hold page."
    )

    def __init__(self, detail: str | None = None, **extra: object) -> None:
        super().__init__(detail or self.default, **extra)


class ExitRowNotConfirmed(DomainError):
    """A seat with conditions (a flight's exit row) without them confirmed: at the seat
    picker's hold (its checkbox) or at online check-in (`exitRowConfirmed`, or a confirmation
    given before for that seat).  One rule, `flights.rules.require_exit_row_confirmation`."""

    status = 422
    code = "exit-row-not-confirmed"
    title = _("Exit-row conditions not confirmed")

    def __init__(self, seats: Iterable[str], *, at_check_in: bool = False) -> None:
        seats = list(seats)
        detail = (
            gettext("Seat %(seat)s is in an exit row: confirm the exit-row conditions to check in.")
            if at_check_in
            else gettext(
                "Seat %(seat)s is in an exit row: confirm the exit-row conditions to take it."
            )
        )
        super().__init__(detail % {"seat": seats[0]}, seats=seats, field="exitRowConfirmed")


class InvalidBookingState(DomainError):
    status = 409
    code = "invalid-booking-state"
    title = _("The booking is not in a state that allows this")


class TicketNotFound(DomainError):
    status = 404
    code = "ticket-not-found"
    title = _("Ticket not found")


def _fare_label(fare_class: str) -> str:
    """ "ECONOMY" -> "Economy" in the active language; other codes (an event's price
    category "A", a standing area "GA-3") as they are."""
    labels = {
        "ECONOMY": _("Economy"),
        "BUSINESS": _("Business"),
    }
    return str(labels.get(fare_class, fare_class))


class BookingClassNotFound(DomainError):
    """The hold names a booking class its fare class does not have (docs/fare-classes.md)."""

    status = 400
    code = "booking-class-not-found"
    title = _("Unknown booking class")


class BookingClassSoldOut(SoldOut):
    """The booking class's nested limit is reached; the fare class may still sell dearer
    classes.  The problem type stays `sold-out`, which clients already handle."""

    def __init__(self, fare_class: str, booking_class: str, *, sale_id: int | None = None) -> None:
        super().__init__(fare_class, sale_id=sale_id)
        self.booking_class = booking_class
        self.extra = {"fareClass": fare_class, "bookingClass": booking_class}

    @property
    def detail(self) -> str:
        return gettext(
            "The %(booking_class)s fare is sold out; other fares of %(fare)s may still be open."
        ) % {"booking_class": self.booking_class, "fare": _fare_label(self.fare_class)}


class NoAdjacentSeats(DomainError):
    """Best available found no block of that many seats side by side in one row."""

    status = 409
    code = "no-adjacent-seats"
    title = _("No seats together")

    def __init__(self, quantity: int, *, accessible: int = 0) -> None:
        if accessible:
            text = gettext(
                "No %(quantity)s seats side by side with %(accessible)s wheelchair places are "
                "free in this category. Try fewer seats or another category."
            )
        else:
            text = gettext(
                "No %(quantity)s seats side by side are free in this category. Try fewer seats "
                "or another category."
            )
        super().__init__(
            text % {"quantity": quantity, "accessible": accessible},
            quantity=quantity,
            accessible=accessible,
        )


class LeavesSingleSeat(DomainError):
    """A customer's pick would leave a single free seat alone in its row (bookings.adjacency);
    `suggestion` is a block of as many seats that leaves nobody alone, when there is one."""

    status = 409
    code = "leaves-single-seat"
    title = _("That would leave a single seat")

    def __init__(self, stranded: Iterable[str], *, suggestion: Iterable[str] = ()) -> None:
        stranded, suggestion = sorted(stranded), sorted(suggestion)
        text = gettext(
            "Your choice would leave seat %(stranded)s empty on its own, which nobody could "
            "book beside others. Please move your seats up to it or leave two free."
        ) % {"stranded": ", ".join(stranded)}
        if suggestion:
            text += " " + gettext("For example, take %(suggestion)s.") % {
                "suggestion": ", ".join(suggestion)
            }
        super().__init__(text, stranded=stranded, suggestion=suggestion)
