"""The sale engine's models, one module per part of the sale, every name importable from here
(the code and the settings' enum paths name `bookings.models.X`; the migrations name the app's
models, wherever they are defined):

* `sales`: the sale, its inventory classes and its seats;
* `booking`: bookings, their passengers and tickets;
* `notifications`: the mail outbox;
* `waitlist`: who waits for a sold-out inventory class;
* the booking classes, the rotating codes' and gates' rows and the resale keep the modules
  they already had beside this package (bookings.booking_class_models, bookings.gate_models,
  bookings.resale_models), imported last because they import from here.
"""

from bookings.models.booking import (
    LIVE_STATUSES,
    Booking,
    BookingStatus,
    Passenger,
    Ticket,
    TicketStatus,
)
from bookings.models.notifications import Notification, NotificationKind, NotificationStatus
from bookings.models.sales import Inventory, Sale, SaleKind, Seat, SeatStatus
from bookings.models.waitlist import ACTIVE_WAITLIST_STATUSES, WaitlistEntry, WaitlistStatus

# isort: split
# Last: these modules import the models above from this package.
from bookings.booking_class_models import BookingClass
from bookings.gate_models import (
    GateDevice,
    GateScan,
    KeyOrigin,
    ScanFlag,
    TicketCredential,
)
from bookings.resale_models import ACTIVE_RESALE_STATUSES, Resale, ResaleStatus

__all__ = [
    "ACTIVE_RESALE_STATUSES",
    "ACTIVE_WAITLIST_STATUSES",
    "LIVE_STATUSES",
    "Booking",
    "BookingClass",
    "BookingStatus",
    "GateDevice",
    "GateScan",
    "Inventory",
    "KeyOrigin",
    "Notification",
    "NotificationKind",
    "NotificationStatus",
    "Passenger",
    "Resale",
    "ResaleStatus",
    "Sale",
    "SaleKind",
    "ScanFlag",
    "Seat",
    "SeatStatus",
    "Ticket",
    "TicketCredential",
    "TicketStatus",
    "WaitlistEntry",
    "WaitlistStatus",
]
