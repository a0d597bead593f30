"""Serializers on the hot path without DRF's per-instance deep copy of their fields.

DRF deep-copies a serializer class's declared fields for every instance it makes, and a
field's `__deepcopy__` re-runs its `__init__` with the arguments it was made with: about a
tenth of a hold's CPU went there (docs/performance.md, issue 26).  `CopiedFields` deep-copies
them once per class (a prototype) and gives each instance shallow copies, which `bind` then
names and attaches as DRF does.  The fields and so the schema stay the same.

Safe because a plain field keeps no per-request state after `bind` (which writes onto the
copy): validators and error messages are read, never mutated.  A nested serializer keeps
state (`_errors`, `_data`), so it is still deep-copied per instance, as DRF does.
"""

from __future__ import annotations

import copy

from rest_framework.serializers import BaseSerializer


# Mix in before `serializers.Serializer`.  No docstring on purpose: drf-spectacular takes a
# serializer's description from the first docstring in its MRO, and this one would become the
# schema's description of every serializer without its own.
class CopiedFields:
    def get_fields(self):
        cls = type(self)
        prototype = cls.__dict__.get("_prototype_fields")
        if prototype is None:
            prototype = copy.deepcopy(self._declared_fields)
            cls._prototype_fields = prototype  # per class: a subclass has its own fields
        return {
            name: copy.deepcopy(field) if isinstance(field, BaseSerializer) else copy.copy(field)
            for name, field in prototype.items()
        }
