"""`AllowedMethodsOnce` gives DRF's `Allow` header, worked out once per view class and
`http_method_names` (issue 26), not per request.  Controls: a memo keyed by the class alone
gives a view made with other `http_method_names` the first one's header (the second test
fails), and DRF's own per-request work is counted so the third test can fail."""

from __future__ import annotations

import pytest
from django.views import View
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from kernel.web.lean import AllowedMethodsOnce
from storefront.api import BookingListCreateApi


class Plain(APIView):
    permission_classes = [AllowAny]
    authentication_classes = []

    def get(self, request):
        return Response({})

    def post(self, request):
        return Response({})


class Once(AllowedMethodsOnce, Plain):
    pass


def allow(view_class, method: str = "get", **initkwargs) -> str:
    request = getattr(APIRequestFactory(), method)("/x")
    return view_class.as_view(**initkwargs)(request)["Allow"]


@pytest.mark.parametrize("method", ["get", "post", "options", "head", "delete"])
def test_the_header_is_drfs(method):
    assert allow(Once, method) == allow(Plain, method) == "GET, POST, HEAD, OPTIONS"


def test_other_method_names_get_their_own():
    assert allow(Once) == "GET, POST, HEAD, OPTIONS"
    assert allow(Once, http_method_names=["get", "options"]) == "GET, OPTIONS"
    assert allow(Once) == "GET, POST, HEAD, OPTIONS"


def test_worked_out_once_per_class(monkeypatch):
    allow(Once)
    walked = []
    real = View._allowed_methods
    monkeypatch.setattr(View, "_allowed_methods", lambda self: walked.append(1) or real(self))
    allow(Once)
    allow(Once, "post")
    assert walked == []
    allow(Plain)
    assert walked == [1]


def test_the_hold_view_is_one_of_them():
    assert issubclass(BookingListCreateApi, AllowedMethodsOnce)
