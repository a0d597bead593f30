"""The page language: Accept-Language, the switcher (a plain form, no JavaScript), and the
logged-in customer's stored preference, which wins over the browser."""

import pytest
from django.urls import reverse

from languages.models import LanguagePreference
from languages.selectors import language_for_customer

pytestmark = pytest.mark.django_db

SEARCH = "/"


def switch(client, language, next_url=SEARCH):
    return client.post(reverse("languages:set_language"), {"language": language, "next": next_url})


@pytest.mark.parametrize(
    ("accept", "lang", "heading"),
    [
        ("de-DE,de;q=0.9", "de", "Flug finden"),
        ("ru", "ru", "Найти рейс"),
        ("en-GB,en;q=0.8", "en", "Find a flight"),
        ("fr-FR", "en", "Find a flight"),  # not offered: the default
    ],
)
def test_accept_language_chooses_the_page_language(client, accept, lang, heading):
    response = client.get(SEARCH, HTTP_ACCEPT_LANGUAGE=accept)
    html = response.content.decode()
    assert f'<html lang="{lang}">' in html
    assert heading in html
    assert response["Content-Language"] == lang


def test_the_switcher_is_a_form_that_works_without_javascript(client):
    html = client.get(SEARCH).content.decode()
    assert f'action="{reverse("languages:set_language")}"' in html
    assert '<select id="language-select" name="language">' in html
    for code, name in (("en", "English"), ("de", "Deutsch"), ("ru", "Русский")):
        assert f'value="{code}" lang="{code}"' in html and name in html

    response = switch(client, "ru")
    assert response.status_code == 302 and response["Location"] == SEARCH
    assert response.cookies["django_language"].value == "ru"
    # The cookie wins over the browser's Accept-Language from now on.
    html = client.get(SEARCH, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '<html lang="ru">' in html and "Найти рейс" in html


def test_switching_while_logged_in_stores_the_preference(client, customer):
    client.force_login(customer)
    switch(client, "de")
    assert LanguagePreference.objects.get(user=customer).language == "de"
    assert language_for_customer(user_id=customer.pk) == "de"
    switch(client, "ru")
    assert LanguagePreference.objects.get(user=customer).language == "ru"


def test_the_stored_preference_wins_over_accept_language_and_cookie(client, customer):
    LanguagePreference.objects.create(user=customer, language="de")
    client.cookies["django_language"] = "ru"
    client.force_login(customer)
    html = client.get(reverse("bookings:mine"), HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert '<html lang="de">' in html and "Meine Buchungen" in html
    # Logged out, the browser decides again.
    client.logout()
    client.cookies.pop("django_language", None)  # logout() empties the jar anyway
    html = client.get(SEARCH, HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert '<html lang="ru">' in html


def test_a_preference_set_in_another_session_is_used_on_the_next_login(client, customer):
    client.force_login(customer)
    client.get(SEARCH)  # this session has looked the (missing) preference up already
    LanguagePreference.objects.create(user=customer, language="ru")
    client.logout()
    client.force_login(customer)
    assert '<html lang="ru">' in client.get(SEARCH).content.decode()


def test_an_unknown_language_changes_nothing(client, customer):
    client.force_login(customer)
    response = switch(client, "xx")
    assert response.status_code == 302
    assert not LanguagePreference.objects.filter(user=customer).exists()
    assert language_for_customer(user_id=customer.pk) == "en"


def test_the_switcher_refuses_get_and_foreign_next_urls(client):
    assert client.get(reverse("languages:set_language")).status_code == 405
    response = switch(client, "de", next_url="https://evil.example/")
    assert response["Location"] == "/"


def test_the_javascript_catalog_carries_the_page_scripts_strings(client):
    catalog = client.get(
        reverse("languages:javascript-catalog"), HTTP_ACCEPT_LANGUAGE="ru"
    ).content.decode()
    assert "Seat %(seats)s was just taken by someone else. Please pick another." in catalog
    assert "\\u0442\\u043e\\u043b\\u044c\\u043a\\u043e" in catalog or "только" in catalog
