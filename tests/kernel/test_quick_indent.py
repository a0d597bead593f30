"""The API renderer's indent (kernel/web/renderers.py `CamelJSONRenderer.get_indent`) is DRF's:
a media type without parameters is answered without parsing it (issue 26)."""

from __future__ import annotations

import pytest
from rest_framework.renderers import JSONRenderer

from kernel.web.renderers import CamelJSONRenderer

MEDIA_TYPES = [None, "", "application/json", "application/json; indent=4",
               "application/json;indent=0", "application/json; indent=x", "*/*",
               "application/json; indent=99", "application/json; indent=-3",
               "APPLICATION/JSON", "application/json ", "text/html"]  # fmt: skip
CONTEXTS = [{}, {"indent": 2}, {"indent": None}]


@pytest.mark.parametrize("media_type", MEDIA_TYPES)
@pytest.mark.parametrize("context", CONTEXTS)
def test_the_indent_is_drfs(media_type, context):
    ours = CamelJSONRenderer().get_indent(media_type, context)
    assert ours == JSONRenderer().get_indent(media_type, context)


class _ContextIgnored(CamelJSONRenderer):
    def get_indent(self, accepted_media_type, renderer_context):
        if not accepted_media_type or accepted_media_type == self.media_type:
            return None
        return super().get_indent(accepted_media_type, renderer_context)


class _PrefixOnly(CamelJSONRenderer):
    def get_indent(self, accepted_media_type, renderer_context):
        if not accepted_media_type or accepted_media_type.startswith(self.media_type):
            return renderer_context.get("indent", None)
        return super().get_indent(accepted_media_type, renderer_context)


@pytest.mark.parametrize("wrong", [_ContextIgnored, _PrefixOnly])
def test_control_a_wrong_quick_indent_is_caught(wrong):
    differs = [
        (media_type, context)
        for media_type in MEDIA_TYPES
        for context in CONTEXTS
        if wrong().get_indent(media_type, context) != JSONRenderer().get_indent(media_type, context)
    ]
    assert differs


def test_an_indent_asked_for_is_still_written():
    body = CamelJSONRenderer().render({"a_b": 1}, "application/json; indent=2", {})
    assert body == b'{\n  "aB": 1\n}'
