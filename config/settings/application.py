"""The Django application: installed apps, the middleware chain, urls, templates, languages,
static files and e-mail."""

from config.settings.environment import BASE_DIR, VAR_DIR, env

INSTALLED_APPS = [
    "config.apps.SeatkeeperConfig",
    "config.admin_site.SeatkeeperAdminConfig",  # django.contrib.admin, sale day first
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "django_celery_beat",
    "axes",
    "channels",
    "kernel",
    "accounts",
    "flights",
    "events",
    "bookings",
    "payments",
    "waitroom",
    "partners",
    "storefront",
    "checkin_sync",
    "languages",
    "config.api",
]

MIDDLEWARE = [
    # An API request with no cookie takes the same middlewares less LEAN_API_SKIPS, the
    # hook-style ones merged into one layer (config/lean_chain.py); all else takes this list.
    "config.lean_chain.LeanApiMiddleware",
    # Then: every response (even an early error) carries the request id and is measured.
    "config.middleware.RequestIdMiddleware",
    "config.middleware.MetricsMiddleware",
    # A cached seat map (GET, no cookie, no credentials) answered here through the same hooks,
    # without URL resolution and DRF (config/cached_reads.py); all else passes on.
    "config.cached_reads.CachedReadMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # WhiteNoise's own middleware is sync-only: under ASGI it would cost every request two
    # extra thread hops.  Ours is the same lookup, usable from async code.
    "config.static.AsyncWhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After the session and the user: Accept-Language (or the language cookie) chooses the
    # language, and a logged-in customer's stored preference wins over both.
    # Django's LocaleMiddleware without its language-prefix work (ours has no i18n_patterns).
    "languages.middleware.LocaleMiddleware",
    "languages.middleware.PreferredLanguageMiddleware",
    # Django's messages, the storage made only when used (config/middleware.py).
    "config.middleware.LazyMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # django-axes asks to be last: turns a locked-out login into our 429 (config/lockout.py).
    # Only the database-outage middleware is inside it (it must see view exceptions first).
    "axes.middleware.AxesMiddleware",
    # Last, so it sees exceptions from views first: a database outage is a 503 page.
    "config.middleware.DatabaseUnavailableMiddleware",
]

# Off: every request takes the whole list above (the lean chain's tests compare both).
LEAN_API_REQUESTS = env.bool("LEAN_API_REQUESTS", default=True)
# Off: a cached seat map takes the long way too (the fast path's tests compare both).
CACHED_READ_FAST_PATH = env.bool("CACHED_READ_FAST_PATH", default=True)
# What an /api/ request without a Cookie header skips, each because it does nothing for one:
LEAN_API_SKIPS = [
    # No static file is served under /api/ (STATIC_URL is /static/, no WHITENOISE_ROOT).
    "config.static.AsyncWhiteNoiseMiddleware",
    # Every /api/ route is a DRF view, and none adds a Django message; unused, the lazy
    # storage writes nothing (and without a cookie there is nothing to read).
    "config.middleware.LazyMessageMiddleware",
    # Only a process_exception hook, which the handler runs for both chains.
    "config.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    },
]

# --- i18n / time ----------------------------------------------------------------------------
# Customers read English, German or Russian (docs: README, "Languages").  The catalogues in
# locale/ are compiled by the install step (scripts/compile_messages.py), never committed.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("ru", "Русский")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"
MEDIA_ROOT = BASE_DIR / "var" / "media"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# --- E-mail ---------------------------------------------------------------------------------
EMAIL_BACKEND = env("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
EMAIL_FILE_PATH = env("EMAIL_FILE_PATH", default=str(VAR_DIR / "mail"))
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="Seatkeeper <tickets@seatkeeper.example>")
