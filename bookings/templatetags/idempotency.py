"""`{% new_idempotency_key %}`: a fresh key per drawing of a form, so submitting that form
twice (a double click, a resubmit after a timeout) is one write, not two."""

import uuid

from django import template

register = template.Library()


@register.simple_tag
def new_idempotency_key() -> str:
    return uuid.uuid4().hex
