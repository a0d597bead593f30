"""Serializer fields shared by the APIs, written so that the schema drf-spectacular derives
from them is the rule the server applies (issue 31: schema and server agree)."""

from __future__ import annotations

from django.core.validators import RegexValidator
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

# An inventory-class code: a flight's fare class (ECONOMY), an event's price category (A, VIP)
# or standing area (GA-3), a booking class (LAUNCH).  Length is max_length's business, so
# the same pattern serves fields that may be blank.
CLASS_CODE_PATTERN = r"^[A-Za-z0-9-]+$"
CLASS_CODE_MESSAGE = _("Use letters, digits and hyphens only, e.g. ECONOMY, A or GA-3.")

# The same rule for the admin's forms (issue 31): a code staff can save is a code the API
# accepts, so "VIP 1" is refused when typed, not when a partner tries to book it.
class_code_validator = RegexValidator(CLASS_CODE_PATTERN, message=CLASS_CODE_MESSAGE)


CLASS_CODE_MAX_LENGTH = 10


class ClassCodeField(serializers.CharField):
    """A class code as sent, checked against `CLASS_CODE_PATTERN` (documented as the field's
    `pattern`).  Not trimmed: " A" is refused as the pattern says, not quietly read as "A"."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", CLASS_CODE_MAX_LENGTH)
        kwargs["trim_whitespace"] = False
        super().__init__(**kwargs)
        self.validators.append(class_code_validator)


# A price of at most 10 whole digits and 2 places that may not be negative, as the server reads
# it (DecimalField: at least one digit, an optional sign it then refuses when negative).
NON_NEGATIVE_PRICE_PATTERN = r"^\+?(?:\d{1,10}(?:\.\d{0,2})?|\.\d{1,2})$"


@extend_schema_field({"type": "string", "format": "decimal", "pattern": NON_NEGATIVE_PRICE_PATTERN})
class NonNegativePriceField(serializers.DecimalField):
    """An amount a customer names (a waitlist's price ceiling): 0 or more, two places.  Its
    schema says "no minus sign", which drf-spectacular's decimal pattern cannot."""

    def __init__(self, **kwargs):
        super().__init__(max_digits=12, decimal_places=2, min_value=0, **kwargs)
