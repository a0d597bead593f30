"""Where settings come from: the environment (and a `.env` file beside manage.py), read
with django-environ; the project's directories; DEBUG, which other parts' defaults follow."""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=False)
