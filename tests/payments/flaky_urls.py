"""URLconf for the delivery tests: the real routes plus a webhook that fails its first calls."""

from django.http import HttpResponse
from django.urls import path

from config.urls import urlpatterns as real_urlpatterns
from payments.api import PaymentWebhookApi

FAILURES_LEFT = {"count": 0}
real_webhook = PaymentWebhookApi.as_view()


def flaky_webhook(request):
    if FAILURES_LEFT["count"] > 0:
        FAILURES_LEFT["count"] -= 1
        return HttpResponse("upstream hiccup", status=503)
    return real_webhook(request)


flaky_webhook.csrf_exempt = True
urlpatterns = [path("flaky-webhook", flaky_webhook), *real_urlpatterns]
