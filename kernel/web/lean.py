"""The hot endpoints' share of DRF, without the work they do not need (issue 26).

Content negotiation is kernel/web/negotiation.py's (a settings class of DRF's, so a module
that imports no view).  Public reads authenticate only a request that carries
credentials in `Authorization` (a bad token stays a 401 everywhere); otherwise `request.user`
is still there, worked out when something asks.

Serializers on the hot path without DRF's per-instance deep copy of their fields.

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

from rest_framework.permissions import AllowAny
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView


# For views any client may call (AllowAny, no per-user throttle): DRF's eager authentication
# only when credentials came in `Authorization`; a session stays unread unless the view asks
# for `request.user`.  (A comment, not a docstring: see PublicReadApi.)
class AuthenticateWhenAsked:
    def perform_authentication(self, request):
        if request.META.get("HTTP_AUTHORIZATION"):
            super().perform_authentication(request)


# Reads anyone may make: flights' and events' search, detail and seat map.  No docstring:
# drf-spectacular would make it the description of every such view without its own.
class PublicReadApi(AuthenticateWhenAsked, APIView):
    permission_classes = [AllowAny]


# Mix in before DRF's view class.  DRF writes every response's `Allow` header from
# `allowed_methods`, worked out per request (a `hasattr` per HTTP method name); the answer is
# the same for every instance of a class with the same `http_method_names` (`View.setup`'s
# `head` follows the class's `get`), so it is worked out once per class and names (issue 26:
# every loser's 409 carries it).  No docstring: drf-spectacular would describe views by it.
class AllowedMethodsOnce:
    @property
    def allowed_methods(self):
        cls, names = type(self), tuple(self.http_method_names)
        known = cls.__dict__.get("_allowed_methods_once")
        if known is None:
            known = cls._allowed_methods_once = {}
        found = known.get(names)
        if found is None:
            found = known[names] = tuple(super().allowed_methods)
        return found


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
            name: copy.deepcopy(field) if isinstance(field, BaseSerializer) else _copy(field)
            for name, field in prototype.items()
        }


def _copy(field):
    # copy.copy's result (a new instance, the same attribute dict copied) without its
    # __reduce_ex__ round: a field defines neither __copy__ nor __slots__.
    new = object.__new__(type(field))
    new.__dict__.update(field.__dict__)
    return new
