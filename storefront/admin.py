"""The Booking admin: read-only lists and the cancel-with-refund action, which enters at the
top (`payments.cancellation.cancel_booking`), so it lives above payments, not in the engine."""

from django.contrib import admin, messages
from django.template.response import TemplateResponse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext

from bookings import catalogue
from bookings.models import Booking, Passenger
from kernel.errors import DomainError
from kernel.local_time_admin import LocalTimeAdminMixin, local_column, local_text
from kernel.replica_admin import ChangeListFromReplica
from languages.formatting import format_money
from payments.cancellation import cancel_booking, may_refund_goodwill
from payments.models import Payment
from payments.selectors import quote_refund
from storefront import sale_admin, waitlist_admin  # noqa: F401  (register their admins)


class PassengerInline(admin.TabularInline):
    model = Passenger
    extra = 0
    fields = ["full_name", "seat", "is_live"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


def _booking_zone(booking: Booking) -> str:
    return catalogue.describe(booking.sale).time_zone


@admin.register(Booking)
class BookingAdmin(LocalTimeAdminMixin, ChangeListFromReplica, admin.ModelAdmin):
    """Read-only: bookings change state only through services (holds, payments, cancellation).
    Its page says what was booked (route or venue, local date), the money moved and offers the
    cancel-with-refund action for this one booking."""

    change_form_template = "admin/bookings/booking/change_form.html"
    list_display = [
        "id",
        "customer",
        "sale_title",
        "fare_class",
        "status",
        "seat_count",
        "amount",
        "currency",
        "expires_local",
        "created_local",
    ]
    list_filter = ["status", "fare_class", "created_at"]
    search_fields = [
        "=id",
        "customer__username",
        "customer__email",
        "=sale__id",
    ]

    def get_search_fields(self, request):
        # Staff search bookings by what the catalogue calls them (a flight's code and id).
        return [*self.search_fields, *catalogue.search_fields("sale__")]

    date_hierarchy = "created_at"
    inlines = [PassengerInline]
    readonly_fields = ["booked", *(f.name for f in Booking._meta.fields), "money"]
    actions = ["cancel_with_refund"]

    def page_zone(self, obj):
        return _booking_zone(obj)

    expires_local = local_column("expires_at", _booking_zone, description="expires (local)")
    created_local = local_column("created_at", _booking_zone, description="created (local)")

    def get_list_select_related(self, request):
        return ["customer", "sale", *catalogue.owner_paths("sale__")]

    @admin.display(description="sale")
    def sale_title(self, obj):
        return catalogue.describe(obj.sale).title

    @admin.display(description="booked")
    def booked(self, obj):
        return describe_booked(obj)

    @admin.display(description="payments and refunds")
    def money(self, obj):
        payments = Payment.objects.filter(booking=obj).prefetch_related("refunds").order_by("pk")
        lines = []
        for payment in payments:
            lines.append(
                (
                    gettext("Payment %(id)s") % {"id": payment.pk},
                    format_money(payment.amount, payment.currency),
                    payment.get_status_display(),
                    local_text(payment.created_at, _booking_zone(obj)),
                )
            )
            lines += [
                (
                    gettext("Refund %(id)s") % {"id": refund.pk},
                    format_money(refund.amount, refund.currency),
                    f"{refund.get_status_display()} · {refund.get_reason_display()}",
                    local_text(refund.created_at, _booking_zone(obj)),
                )
                for refund in payment.refunds.order_by("pk")
            ]
        if not lines:
            return gettext("No payment yet.")
        return format_html(
            '<table class="booking-money"><tbody>{}</tbody></table>',
            format_html_join(
                "", '<tr><th scope="row">{}</th><td>{}</td><td>{}</td><td>{}</td></tr>', lines
            ),
        )

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(
        description="Cancel selected bookings with refund (by the fare's policy)",
        permissions=["change"],
    )
    def cancel_with_refund(self, request, queryset):
        """First a confirmation page listing each booking and the refund its policy gives;
        only the POST from that page (`confirm=yes`) cancels anything.  Staff with the
        goodwill permission also see a "full refund" override (`goodwill=yes`); from anyone
        else that field is refused and nothing is cancelled."""
        booking_ids = list(queryset.order_by("pk").values_list("pk", flat=True))
        goodwill = request.POST.get("goodwill") == "yes"
        if goodwill and not may_refund_goodwill(request.user):
            # A forged field, or a permission taken away since the page was drawn.
            self.message_user(
                request,
                gettext(
                    "You do not have the permission to grant goodwill refunds. "
                    "Nothing was cancelled."
                ),
                messages.ERROR,
            )
            return None
        if request.POST.get("confirm") != "yes":
            rows = []
            for booking in queryset.select_related("sale", "customer").order_by("pk"):
                try:
                    quote = quote_refund(
                        customer=request.user, booking_id=booking.pk, by_staff=True
                    )
                except DomainError as error:
                    quote = None
                    problem = f"{error.title}. {error.detail}"
                else:
                    problem = "" if quote.cancellable else quote.reason
                rows.append(
                    {
                        "booking": booking,
                        "booked": describe_booked(booking),
                        "quote": quote,
                        "problem": problem,
                    }
                )
            return TemplateResponse(
                request,
                "admin/bookings/booking/cancel_with_refund_confirm.html",
                {
                    **self.admin_site.each_context(request),
                    "title": gettext("Cancel bookings with refund?"),
                    "opts": self.model._meta,
                    "rows": rows,
                    "booking_ids": booking_ids,
                    "may_goodwill": may_refund_goodwill(request.user),
                    "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                },
            )
        for booking_id in booking_ids:
            try:
                done = cancel_booking(
                    customer=request.user, booking_id=booking_id, by_staff=True, goodwill=goodwill
                )
            except DomainError as error:
                self.message_user(
                    request,
                    gettext("Booking %(id)s: %(title)s. %(detail)s")
                    % {"id": booking_id, "title": error.title, "detail": error.detail},
                    messages.ERROR,
                )
                continue
            if done.refund is None:
                refund = gettext("no refund")
            else:
                amount = format_money(done.refund.amount, done.refund.currency)
                refund = (
                    gettext("goodwill refund of %(amount)s queued")
                    if done.refund.goodwill
                    else gettext("refund of %(amount)s queued")
                ) % {"amount": amount}
            self.message_user(
                request,
                gettext("Booking %(id)s cancelled: %(refund)s.")
                % {"id": booking_id, "refund": refund},
            )
        return None


def describe_booked(booking: Booking) -> str:
    """ "flight VN213 · SGN → HAN · 2026-12-24 07:00 +07": what and when, in the place's zone."""
    summary = catalogue.describe(booking.sale)
    when = local_text(summary.starts_at, summary.time_zone)
    return f"{summary.title} · {summary.place} · {when}"
