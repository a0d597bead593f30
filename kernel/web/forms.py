"""A Django form's errors as the one line a page shows in its message."""

from __future__ import annotations

from django import forms


def form_errors(form: forms.BaseForm) -> str:
    """Every error of `form`, in field order, joined into one sentence for the page."""
    return " ".join(str(error) for errors in form.errors.values() for error in errors)


def labelled_form_errors(form: forms.BaseForm) -> str:
    """The first error of each field, after the field's label ("Date: Enter a valid date."),
    for forms whose fields the message must name (searches, the seat picker's query)."""
    parts = []
    for name, errors in form.errors.items():
        label = form.fields[name].label if name in form.fields else None
        parts.append(f"{label or name.title()}: {errors[0]}" if name != "__all__" else errors[0])
    return " ".join(parts)
