from django.urls import path

from storefront import (
    api,
    best_available_api,
    checkin_api,
    gate_api,
    live_ticket_api,
    resale_api,
    ticket_api,
)

app_name = "bookings_api"
ticket = "bookings/<int:booking_id>/tickets/<int:ticket_id>"
urlpatterns = [
    path("bookings", api.BookingListCreateApi.as_view(), name="list"),
    path(
        "bookings/best-available",
        best_available_api.BestAvailableApi.as_view(),
        name="best-available",
    ),
    path("bookings/<int:booking_id>", api.BookingDetailApi.as_view(), name="detail"),
    path(
        "bookings/<int:booking_id>/passengers",
        api.BookingPassengersApi.as_view(),
        name="passengers",
    ),
    path("bookings/<int:booking_id>/resale", resale_api.BookingResaleApi.as_view(), name="resale"),
    path("bookings/<int:booking_id>/tickets", ticket_api.TicketListApi.as_view(), name="tickets"),
    path(f"{ticket}/qr.png", ticket_api.TicketPngApi.as_view(), name="ticket-qr-png"),
    path(f"{ticket}/qr.svg", ticket_api.TicketSvgApi.as_view(), name="ticket-qr-svg"),
    path(f"{ticket}/boarding-pass.pdf", ticket_api.TicketPdfApi.as_view(), name="ticket-pdf"),
    path("checkin/scan", checkin_api.CheckinScanApi.as_view(), name="checkin-scan"),
    path(
        f"{ticket}/credential",
        live_ticket_api.TicketCredentialApi.as_view(),
        name="ticket-credential",
    ),
    path(
        f"{ticket}/live-code", live_ticket_api.TicketLiveCodeApi.as_view(), name="ticket-live-code"
    ),
    path("gates", gate_api.OpenGateApi.as_view(), name="gate-open"),
    path("gates/<int:device_id>/scans", gate_api.SyncGateApi.as_view(), name="gate-sync"),
]
