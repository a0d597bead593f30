# Production image: one image, three roles (web, worker, beat) chosen by the command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY config ./config
COPY flights ./flights
COPY bookings ./bookings
COPY payments ./payments
COPY waitroom ./waitroom
COPY partners ./partners
COPY storefront ./storefront
COPY languages ./languages
RUN pip install .
COPY . .
RUN python scripts/compile_messages.py
RUN DJANGO_SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput

RUN useradd --system --uid 1000 seatkeeper && mkdir -p /app/var && chown -R seatkeeper /app/var
USER seatkeeper
EXPOSE 8000
CMD ["uvicorn", "config.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--workers", "4"]
