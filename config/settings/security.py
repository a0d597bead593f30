"""Secrets, hosts, HTTPS and cookies, authentication, client addresses and failed logins,
sign-up limits (docs/security.md)."""

from datetime import timedelta

from config.settings.environment import DEBUG, env

# The in-repository fallbacks below are for development only: with DEBUG off, the system
# checks in config/checks.py refuse to start (runserver, serve, migrate) while any of them is
# in use.  The prefix makes `check --deploy` flag the key too.
DEV_SECRET_KEY = "django-insecure-dev-key-change-me-in-production-0123456789abcdef"
SECRET_KEY = env("DJANGO_SECRET_KEY", default=DEV_SECRET_KEY)
ALLOWED_HOSTS = env.list(
    "DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"]
)
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

# --- HTTPS and cookies ------------------------------------------------------------------------
# On by default whenever DEBUG is off; each can be switched off from the environment (e.g. a
# plain-HTTP try-out on localhost), which `check --deploy` then reports.
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=not DEBUG)
# The load balancer's health probe speaks plain HTTP to the container, and a redirected
# webhook POST is lost (the signature, not the transport, authenticates it).
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^api/payments/webhook"]
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=not DEBUG)
SESSION_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# Trust X-Forwarded-Proto only behind a proxy that sets it (and strips the client's own):
# DJANGO_SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO,https
SECURE_PROXY_SSL_HEADER = (
    tuple(v for v in env.list("DJANGO_SECURE_PROXY_SSL_HEADER", default=[]) if v) or None
)

# --- Auth -----------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "config.auth_backends.LoginAttemptsBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"

# --- Client addresses and failed logins ---------------------------------------------------------
# X-Forwarded-For is written by the client unless our own proxies overwrite it: it is read only
# when NUM_PROXIES says how many of them append to it (and, with TRUSTED_PROXIES set, only
# when the connection comes from one of them).  kernel/web/client_ip.py is the one reader.
NUM_PROXIES = env.int("NUM_PROXIES", default=0)
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])
# django-axes: after LOGIN_FAILURE_LIMIT failed logins for one username, or from one client
# address, further logins there are refused (429) for LOGIN_LOCKOUT_MINUTES; on the token API,
# /accounts/login/ and /admin/login/ alike.
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_CLIENT_IP_CALLABLE = "kernel.web.client_ip.client_ip"
AXES_USERNAME_CALLABLE = "config.auth_backends.attempted_username"
AXES_LOCKOUT_CALLABLE = "config.lockout.locked_out"
AXES_HTTP_RESPONSE_CODE = 429
# Failures expire after the lockout time; a success does not wipe them (or an attacker could
# clear an address's count by logging in to an account of their own now and then).
AXES_RESET_ON_SUCCESS = False
AXES_VERBOSE = False
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# Sign-up limits and e-mail verification (docs/security.md, "Sign-up limits and e-mail
# verification").  Rates are "<n>/<second|minute|hour|day>", counted per client address
# (kernel/web/client_ip.py) in the shared cache; a cache that does not answer lets people in.
ACCOUNTS = {
    # Accounts created per client address: each is another place in a pre-queue.
    "SIGNUPS_PER_ADDRESS": env("SIGNUPS_PER_ADDRESS", default="5/hour"),
    # "Send me the link" per account, and password-reset mails per client address.
    "VERIFICATION_LINKS_PER_ACCOUNT": env("VERIFICATION_LINKS_PER_ACCOUNT", default="5/hour"),
    "PASSWORD_RESETS_PER_ADDRESS": env("PASSWORD_RESETS_PER_ADDRESS", default="5/hour"),
    # A verification link works this long (Django's own PASSWORD_RESET_TIMEOUT bounds resets).
    "VERIFICATION_LINK_MAX_AGE": timedelta(hours=env.int("VERIFICATION_LINK_HOURS", default=72)),
}
