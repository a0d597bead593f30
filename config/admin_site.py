"""The admin site as sale staff meet it: the index opens with what a sale day is about
(flights, events, bookings, refunds, waiting rooms); the machinery (login lockouts, periodic
tasks, the outbox, webhook logs, API tokens) sits under its own heading at the end."""

from django.contrib.admin import AdminSite
from django.contrib.admin.apps import AdminConfig
from django.utils.translation import gettext_lazy as _

#: "app_label.ModelName" in the order staff reach for them on a sale day.
SALE_DAY = (
    "flights.Flight",
    "events.Event",
    "bookings.Booking",
    "payments.Refund",
    "waitroom.WaitingRoom",
)
#: Whole apps that are plumbing, and single models of other apps that are.
PLUMBING_APPS = {"axes", "django_celery_beat", "kernel", "ops", "authtoken", "checkin_sync"}
PLUMBING_MODELS = {
    "payments.WebhookEvent",
    "partners.WebhookDelivery",
    "waitroom.Admission",
    "languages.LanguagePreference",
}


def _key(app: dict, model: dict) -> str:
    return f"{app['app_label']}.{model['object_name']}"


class SeatkeeperAdminSite(AdminSite):
    site_header = _("Seatkeeper staff")
    site_title = _("Seatkeeper staff")
    index_title = _("Sale day")

    def get_app_list(self, request, app_label=None):
        apps = super().get_app_list(request, app_label)
        if app_label is not None:
            return apps
        found = {_key(app, model): model for app in apps for model in app["models"]}
        first = [found[key] for key in SALE_DAY if key in found]
        plumbing, rest = [], []
        for app in apps:
            if app["app_label"] in PLUMBING_APPS:
                plumbing += app["models"]
                continue
            models = [m for m in app["models"] if _key(app, m) not in SALE_DAY]
            plumbing += [m for m in models if _key(app, m) in PLUMBING_MODELS]
            models = [m for m in models if _key(app, m) not in PLUMBING_MODELS]
            if models:
                rest.append({**app, "models": models})
        grouped = []
        if first:
            grouped.append(_group("sale-day", _("Sale day"), first))
        grouped += rest
        if plumbing:
            grouped.append(_group("plumbing", _("Plumbing (operators only)"), plumbing))
        return grouped


def _group(label: str, name, models: list[dict]) -> dict:
    return {
        "name": name,
        "app_label": label,
        "app_url": models[0]["admin_url"] or "",
        "has_module_perms": True,
        "models": models,
    }


class SeatkeeperAdminConfig(AdminConfig):
    default_site = "config.admin_site.SeatkeeperAdminSite"
