from django.urls import path

from accounts import views

app_name = "accounts"
urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("verify-email/", views.verification, name="verification"),
    path("verify-email/<str:token>/", views.verify, name="verify"),
    # Before django.contrib.auth.urls (config/urls.py): the same path, our view.
    path("password_reset/", views.PasswordResetView.as_view(), name="password_reset"),
]
