from django.urls import path

from storefront import api, ticket_api

app_name = "bookings_api"
ticket = "bookings/<int:booking_id>/tickets/<int:ticket_id>"
urlpatterns = [
    path("bookings", api.BookingListCreateApi.as_view(), name="list"),
    path("bookings/<int:booking_id>", api.BookingDetailApi.as_view(), name="detail"),
    path(
        "bookings/<int:booking_id>/passengers",
        api.BookingPassengersApi.as_view(),
        name="passengers",
    ),
    path("bookings/<int:booking_id>/tickets", ticket_api.TicketListApi.as_view(), name="tickets"),
    path(f"{ticket}/qr.png", ticket_api.TicketPngApi.as_view(), name="ticket-qr-png"),
    path(f"{ticket}/qr.svg", ticket_api.TicketSvgApi.as_view(), name="ticket-qr-svg"),
    path(f"{ticket}/boarding-pass.pdf", ticket_api.TicketPdfApi.as_view(), name="ticket-pdf"),
    path("checkin/scan", api.CheckinScanApi.as_view(), name="checkin-scan"),
]
