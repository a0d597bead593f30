"""The check-in system's own store: a mirror of bookings built from the event log alone."""

from django.db import models


class MirroredStatus(models.TextChoices):
    CONFIRMED = "CONFIRMED", "Confirmed"
    CANCELLED = "CANCELLED", "Cancelled"


class CheckinBooking(models.Model):
    booking_id = models.BigIntegerField(primary_key=True)
    sale_id = models.CharField(max_length=40)
    status = models.CharField(max_length=12, choices=MirroredStatus.choices)
    fare_class = models.CharField(max_length=40, blank=True)
    # The outbox id of the last event applied to this booking.
    last_event_id = models.BigIntegerField()
    updated_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["sale_id", "status"])]

    def __str__(self) -> str:
        return f"booking {self.booking_id} {self.status}"


class CheckinPassenger(models.Model):
    booking = models.ForeignKey(CheckinBooking, on_delete=models.CASCADE, related_name="passengers")
    passenger_id = models.BigIntegerField(unique=True)
    full_name = models.CharField(max_length=120, blank=True)
    seat_no = models.CharField(max_length=16, null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.full_name} {self.seat_no or '(seat at the gate)'}"


class SaleTally(models.Model):
    """How many bookings and passengers a sale expects at check-in.

    Moved by +n on a confirmation and -n on a cancellation, so applying one event twice would
    show at once: this is the effect the consumer's dedupe protects."""

    sale_id = models.CharField(max_length=40, primary_key=True)
    bookings = models.IntegerField(default=0)
    passengers = models.IntegerField(default=0)

    def __str__(self) -> str:
        return f"sale {self.sale_id}: {self.passengers} passengers"


class AppliedEvent(models.Model):
    """The consumer's receipt per log event, written in the transaction of its effect: a
    redelivered event finds it and changes nothing.  `id` is the order of application."""

    event_id = models.BigIntegerField(unique=True)
    booking_id = models.CharField(max_length=40)
    event_type = models.CharField(max_length=60)
    stream_sequence = models.BigIntegerField()
    applied_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.event_type} #{self.event_id} (offset {self.stream_sequence})"
