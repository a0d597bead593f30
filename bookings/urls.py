from django.urls import path

from bookings import views

app_name = "bookings"
urlpatterns = [
    path("flights/<int:flight_id>/hold/", views.hold_create, name="hold_create"),
    path("bookings/", views.my_bookings, name="mine"),
    path("bookings/<int:booking_id>/", views.booking_detail, name="detail"),
    path("bookings/<int:booking_id>/cancel-hold/", views.hold_cancel, name="hold_cancel"),
    path("accounts/signup/", views.signup, name="signup"),
]
