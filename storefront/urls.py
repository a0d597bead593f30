from django.urls import path

from storefront import checkin_views, resale_views, ticket_views, views

app_name = "bookings"
ticket = "bookings/<int:booking_id>/tickets/<int:ticket_id>"
urlpatterns = [
    path("flights/<int:flight_id>/hold/", views.hold_create, name="hold_create"),
    path("bookings/", views.my_bookings, name="mine"),
    path("bookings/<int:booking_id>/", views.booking_detail, name="detail"),
    path("bookings/<int:booking_id>/progress.json", views.booking_progress, name="progress"),
    path("bookings/<int:booking_id>/cancel-hold/", views.hold_cancel, name="hold_cancel"),
    path("bookings/<int:booking_id>/names/", views.name_passengers, name="names"),
    path("bookings/<int:booking_id>/resale/", resale_views.resale_list, name="resale"),
    path(
        "bookings/<int:booking_id>/resale/withdraw/",
        resale_views.resale_withdraw,
        name="resale_withdraw",
    ),
    path(f"{ticket}.png", ticket_views.ticket_qr_png, name="ticket-png"),
    path(f"{ticket}.svg", ticket_views.ticket_qr_svg, name="ticket-svg"),
    path(f"{ticket}.pdf", ticket_views.ticket_pdf_download, name="ticket-pdf"),
    path("checkin/", checkin_views.checkin_scan, name="checkin"),
]
