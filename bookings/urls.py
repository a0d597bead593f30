from django.urls import path

from bookings import views

app_name = "bookings"
ticket = "bookings/<int:booking_id>/tickets/<int:ticket_id>"
urlpatterns = [
    path(f"{ticket}.png", views.ticket_qr_png, name="ticket-png"),
    path(f"{ticket}.svg", views.ticket_qr_svg, name="ticket-svg"),
    path(f"{ticket}.pdf", views.ticket_pdf_download, name="ticket-pdf"),
    path("checkin/", views.checkin_scan, name="checkin"),
]
