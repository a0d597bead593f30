"""`kernel.web.lean.CopiedFields`: the same fields and answers as DRF's own copy, without
re-making every field per instance (issue 26)."""

from __future__ import annotations

import pytest
from rest_framework import fields, serializers

from kernel.web.lean import CopiedFields


class Plain(serializers.Serializer):
    code = serializers.CharField(max_length=4)
    names = serializers.ListField(child=serializers.CharField(max_length=3), required=False)
    count = serializers.IntegerField(min_value=1)


class Lean(CopiedFields, Plain):
    pass


@pytest.fixture
def field_inits(monkeypatch):
    made: list[str] = []
    real = fields.Field.__init__

    def init(self, *args, **kwargs):
        if not isinstance(self, serializers.BaseSerializer):  # the fields, not the serializer
            made.append(type(self).__name__)
        real(self, *args, **kwargs)

    monkeypatch.setattr(fields.Field, "__init__", init)
    return made


@pytest.mark.parametrize(
    "body",
    [
        {"code": "AB", "names": ["x", "yz"], "count": 2},
        {"code": "ABCDE", "count": 0},
        {"code": "AB", "names": ["long"], "count": "x"},
        {},
    ],
)
def test_lean_validates_and_refuses_as_drf_does(body):
    plain, lean = Plain(data=body), Lean(data=body)
    assert plain.is_valid() == lean.is_valid()
    assert plain.errors == lean.errors
    if not plain.errors:
        assert plain.validated_data == lean.validated_data


def test_each_instance_has_its_own_bound_fields():
    first, second = Lean(), Lean()
    assert first.fields["code"] is not second.fields["code"]
    assert first.fields["code"].parent is first and second.fields["code"].parent is second
    assert list(first.fields) == list(Plain().fields)


def test_a_second_instance_makes_no_field(field_inits):
    assert Lean().fields  # the class's prototype, once
    field_inits.clear()
    Lean(data={"code": "AB", "count": 1}).is_valid()
    assert field_inits == []


def test_control_drf_remakes_every_field_per_instance(field_inits):
    assert Plain().fields
    field_inits.clear()
    Plain(data={"code": "AB", "count": 1}).is_valid()
    assert {"CharField", "ListField", "IntegerField"} <= set(field_inits)
