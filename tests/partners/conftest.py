import pytest
from django.contrib.auth.models import Permission

from tests.factories import UserFactory
from tests.partners.receiver import Receiver, start_receiver


@pytest.fixture(autouse=True)
def partner_settings(settings):
    settings.PARTNER_WEBHOOKS = {
        **settings.PARTNER_WEBHOOKS,
        "ALLOW_PRIVATE_URLS": True,  # the receivers listen on 127.0.0.1
        "BACKOFF_BASE_SECONDS": 0.2,
        "BACKOFF_MAX_SECONDS": 2,
        "TIMEOUT_SECONDS": 5,
    }
    return settings


@pytest.fixture
def partner(db):
    user = UserFactory(username="travelagent")
    user.user_permissions.add(Permission.objects.get(codename="manage_own_webhooks"))
    return user


@pytest.fixture
def receiver():
    found = Receiver()
    server = start_receiver(found)
    yield found
    server.shutdown()
    server.server_close()
