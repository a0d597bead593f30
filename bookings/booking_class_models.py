"""Booking classes nested in one inventory class (docs/fare-classes.md).

A cabin (an `Inventory` row, e.g. ECONOMY) may sell the same seats under several booking
classes: the launch fare, the saver fare, ... up to the cabin's own class (its `Inventory`
row and price, the class of every hold that names none).  Each `BookingClass` row is one
*nested* authorisation: `held` and `sold` count the units of that class **and of every lower
one** (smaller `rank`), and a CHECK keeps them within `auth_limit`.  So "launch <= 30, saver
and launch together <= 100" are two rows with limits 30 and 100, and the cabin's own row keeps
everything within capacity + overbook, as before.
"""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models import F, Q


class BookingClass(models.Model):
    sale = models.ForeignKey(
        "bookings.Sale", on_delete=models.CASCADE, related_name="booking_classes"
    )
    fare_class = models.CharField(
        max_length=10, help_text="The inventory class (cabin) whose units this class sells."
    )
    code = models.CharField(max_length=10, help_text="Booking-class code, e.g. LAUNCH.")
    name = models.CharField(max_length=60, help_text="What customers see, e.g. 'Launch fare'.")
    rank = models.PositiveSmallIntegerField(
        help_text="1 is the cheapest; each class's limit counts itself and every lower rank."
    )
    auth_limit = models.PositiveIntegerField(
        help_text="Most units this class and every lower one may sell together."
    )
    price = models.DecimalField(max_digits=12, decimal_places=2)
    held = models.PositiveIntegerField(default=0, help_text="Held units of this and lower ranks.")
    sold = models.PositiveIntegerField(default=0, help_text="Sold units of this and lower ranks.")

    class Meta:
        ordering = ["sale_id", "fare_class", "rank"]
        verbose_name_plural = "booking classes"
        constraints = [
            models.UniqueConstraint(
                fields=["sale", "fare_class", "code"], name="booking_class_code_uniq"
            ),
            models.UniqueConstraint(
                fields=["sale", "fare_class", "rank"], name="booking_class_rank_uniq"
            ),
            models.CheckConstraint(
                condition=Q(sold__lte=F("auth_limit") - F("held")),
                name="booking_class_within_nested_limit",
            ),
            models.CheckConstraint(
                condition=Q(sold__gte=0), name="booking_class_sold_non_negative"
            ),
            models.CheckConstraint(
                condition=Q(held__gte=0), name="booking_class_held_non_negative"
            ),
            models.CheckConstraint(condition=Q(rank__gte=1), name="booking_class_rank_from_1"),
            models.CheckConstraint(
                condition=Q(price__gte=Decimal("0")), name="booking_class_price_non_negative"
            ),
            models.CheckConstraint(condition=~Q(code=""), name="booking_class_code_not_blank"),
        ]

    def __str__(self) -> str:
        return f"sale {self.sale_id} {self.fare_class}/{self.code}"

    @property
    def left(self) -> int:
        return max(self.auth_limit - self.sold - self.held, 0)
