"""The fare classes' admin: the limits form (one rule for the flight page's inline and the
inventory page), the inline on the flight page, and the inventory overview across flights.
Limits are written by `flights.services.set_fare_limits`, never saved from a stale form."""

from django import forms
from django.contrib import admin, messages
from django.db.models import F

from bookings.models import Sale
from flights.admin_overbooking import ACCEPT_SUGGESTION, accept_suggestions, suggestion_html
from flights.models import FareInventory, Flight
from flights.overbooking import suggest_overbook_limit
from flights.services import set_fare_limits
from kernel.errors import DomainError
from payments.currency import NotChargeable, check_chargeable


class FareInventoryForm(forms.ModelForm):
    class Meta:
        model = FareInventory
        fields = ["fare_class", "capacity", "overbook_limit", "price", "currency"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():  # a table row's inputs: the column header is far
            field.widget.attrs.setdefault("aria-label", str(field.label))

    def clean(self):
        cleaned = super().clean()
        price, currency = cleaned.get("price"), cleaned.get("currency")
        if price is not None and currency:
            try:
                check_chargeable(price, currency)
            except NotChargeable as exc:
                self.add_error("price", str(exc))
        if self.instance.pk and not self.errors:
            taken = self.instance.sold + self.instance.held
            limit = cleaned["capacity"] + cleaned["overbook_limit"]
            if limit < taken:
                raise forms.ValidationError(
                    f"Capacity + overbook limit ({limit}) cannot go below the {self.instance.sold} "
                    f"sold and {self.instance.held} held units."
                )
        return cleaned


def apply_fare_limits(model_admin, request, inventory_id: int, cleaned_data: dict) -> None:
    """Write only the staff-editable limits (sold/held move under live traffic and must never
    be written back from a stale form); a refusal becomes an admin message."""
    try:
        set_fare_limits(
            inventory_id=inventory_id,
            capacity=cleaned_data["capacity"],
            overbook_limit=cleaned_data["overbook_limit"],
            price=cleaned_data["price"],
        )
    except DomainError as error:
        model_admin.message_user(request, error.detail, messages.ERROR)


class FareInventoryInline(admin.TabularInline):
    """The flight's fare classes, edited on the flight page: they hang off its sale, so the
    inline formset is the sale's, handed the flight's sale."""

    model = FareInventory
    form = FareInventoryForm
    extra = 0
    readonly_fields = ["sold", "held", "left"]
    fields = [
        "fare_class",
        "capacity",
        "overbook_limit",
        "price",
        "currency",
        "sold",
        "held",
        "left",
    ]

    def __init__(self, parent_model, admin_site):
        super().__init__(Sale, admin_site)

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, getattr(obj, "sale", None), **kwargs)

        class FlightSaleFormSet(formset):
            def __init__(self, *args, instance=None, **kwargs):
                if isinstance(instance, Flight):
                    instance = instance.sale if instance.sale_id else Sale()
                super().__init__(*args, instance=instance, **kwargs)

            def add_fields(self, form, index):
                super().add_fields(form, index)
                if "DELETE" in form.fields:
                    form.fields["DELETE"].widget.attrs["aria-label"] = "Delete"

        return FlightSaleFormSet

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, getattr(obj, "sale", None))

    @admin.display(description="left")
    def left(self, obj):
        return obj.available if obj.pk else "—"


@admin.register(FareInventory)
class FareInventoryAdmin(admin.ModelAdmin):
    """Inventory overview across flights: what staff watch on a sale day."""

    list_display = [
        "flight",
        "fare_class",
        "capacity",
        "overbook_limit",
        "sold",
        "held",
        "left",
        "suggested",
        "price",
        "currency",
    ]
    list_filter = ["fare_class", "sale__flight__origin", "sale__flight__destination"]
    search_fields = ["sale__flight__code", "=sale__flight__id"]
    list_select_related = ["sale__flight__origin"]  # the flight names its local time
    readonly_fields = ["flight", "fare_class", "sold", "held", "overbook_suggestion"]
    fields = [
        "flight",
        "fare_class",
        "capacity",
        "overbook_limit",
        "overbook_suggestion",
        "price",
        "currency",
        "sold",
        "held",
    ]
    form = FareInventoryForm
    actions = ["accept_suggestions"]

    @admin.display(description="suggested overbook limit (from measured no-shows)")
    def overbook_suggestion(self, obj):
        return suggestion_html(suggest_overbook_limit(inventory=obj)) if obj.pk else "—"

    @admin.action(
        description="Accept the suggested overbook limit of selected fare classes",
        permissions=["accept_suggestion"],
    )
    def accept_suggestions(self, request, queryset):
        return accept_suggestions(self, request, queryset)

    def has_accept_suggestion_permission(self, request):
        return request.user.has_perm(ACCEPT_SUGGESTION)

    @admin.display(
        description="left", ordering=F("capacity") + F("overbook_limit") - F("sold") - F("held")
    )
    def left(self, obj):
        return obj.available

    @admin.display(description="flight", ordering="sale__flight__departure_at")
    def flight(self, obj):
        return obj.sale.flight

    @admin.display(description="suggested limit")
    def suggested(self, obj):
        suggestion = suggest_overbook_limit(inventory=obj)
        return "—" if suggestion.suggested_limit is None else suggestion.suggested_limit

    def has_add_permission(self, request):
        return False

    def save_model(self, request, obj, form, change):
        apply_fare_limits(self, request, obj.pk, form.cleaned_data)
