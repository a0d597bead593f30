from django.contrib import admin
from django.urls import include, path

api_patterns = [
    path("", include("flights.api_urls")),
    path("", include("bookings.api_urls")),
    path("", include("payments.api_urls")),
    path("", include("waitroom.api_urls")),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include(api_patterns)),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("flights.urls")),
    path("", include("bookings.urls")),
    path("", include("payments.urls")),
    path("", include("waitroom.urls")),
]
