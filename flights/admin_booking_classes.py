"""Staff set a flight's nested booking classes and their limits (docs/fare-classes.md).

Thin: every write is the engine's `set_booking_class` / `remove_booking_class`, which keep
the nesting, refuse a limit below what is held and sold, and lock in the one lock order
(docs/architecture.md); the counters are read-only here, since they move under live holds."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages

from bookings.inventory import remove_booking_class, set_booking_class
from bookings.models import BookingClass
from flights.models import FareClass, Flight
from kernel.errors import DomainError
from kernel.web.fields import class_code_validator


class BookingClassForm(forms.ModelForm):
    flight = forms.ModelChoiceField(queryset=Flight.objects.order_by("-departure_at"))
    fare_class = forms.ChoiceField(choices=FareClass.choices)

    class Meta:
        model = BookingClass
        fields = ["fare_class", "code", "name", "rank", "auth_limit", "price"]
        labels = {"auth_limit": "nested limit (this class and every lower rank)"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["code"].validators.append(class_code_validator)
        self.fields["code"].strip = False  # " LAUNCH" is refused, as the API refuses it
        if self.instance.pk:
            self.fields["flight"].initial = self.instance.sale.flight
            for name in ("flight", "fare_class", "code", "rank"):
                self.fields[name].disabled = True


@admin.register(BookingClass)
class BookingClassAdmin(admin.ModelAdmin):
    form = BookingClassForm
    list_display = [
        "flight", "fare_class", "code", "name", "rank", "auth_limit", "price", "held", "sold",
        "left",
    ]  # fmt: skip
    list_filter = ["fare_class"]
    search_fields = ["sale__flight__code", "code"]
    list_select_related = ["sale__flight"]
    readonly_fields = ["held", "sold"]
    ordering = ["sale_id", "fare_class", "rank"]

    @admin.display(description="flight", ordering="sale__flight__departure_at")
    def flight(self, obj):
        return obj.sale.flight

    @admin.display(description="left")
    def left(self, obj):
        return obj.left

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        flight = data["flight"] if not change else obj.sale.flight
        try:
            saved = set_booking_class(
                sale_id=flight.sale_id,
                fare_class=data["fare_class"] if not change else obj.fare_class,
                code=data["code"] if not change else obj.code,
                name=data["name"],
                rank=data["rank"] if not change else obj.rank,
                auth_limit=data["auth_limit"],
                price=data["price"],
            )
        except DomainError as error:
            self.message_user(request, error.detail, messages.ERROR)
            return
        obj.pk, obj.sale_id = saved.pk, saved.sale_id

    def delete_model(self, request, obj):
        try:
            remove_booking_class(booking_class_id=obj.pk)
        except DomainError as error:
            self.message_user(request, error.detail, messages.ERROR)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            self.delete_model(request, obj)
