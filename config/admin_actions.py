"""Admin actions of installed libraries that declare no permission run for anyone who may
merely *view* the list (Django's default).  Ours all declare one (tests/pages/
test_admin_permissions.py); the libraries' get one here: enabling, disabling or running a beat
job is a change, cleaning up login attempts is a delete."""

from __future__ import annotations

from django.contrib.admin import AdminSite

OUR_APPS = (
    "kernel.",
    "flights.",
    "bookings.",
    "payments.",
    "waitroom.",
    "partners.",
    "events.",
    "storefront.",
    "config.",
)
LIBRARY_ACTION_PERMISSIONS = {"cleanup_expired_attempts": ("delete",)}


def declare_library_action_permissions(site: AdminSite) -> list[str]:
    """Give every undeclared action of a library's ModelAdmin a permission; returns them."""
    patched = []
    for model, model_admin in site._registry.items():
        if type(model_admin).__module__.startswith(OUR_APPS):
            continue
        for func, name, _ in model_admin._get_base_actions():
            if getattr(func, "allowed_permissions", None):
                continue
            func.allowed_permissions = LIBRARY_ACTION_PERMISSIONS.get(name, ("change",))
            patched.append(f"{model._meta.label}.{name}")
    return patched
