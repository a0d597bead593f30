"""kernel.web.forms: a form's errors as the page's message, the one rule every page uses."""

from django import forms

from kernel.web.forms import form_errors, labelled_form_errors


class _Search(forms.Form):
    city = forms.CharField(label="City", max_length=3)
    day = forms.DateField()

    def clean(self):
        raise forms.ValidationError("Nothing matches.")


def test_every_error_in_field_order():
    form = _Search({"city": "Paris", "day": "soon"})
    assert form_errors(form) == (
        "Ensure this value has at most 3 characters (it has 5). Enter a valid date. "
        "Nothing matches."
    )


def test_labelled_errors_name_each_field_once():
    form = _Search({"city": "Paris", "day": "soon"})
    assert labelled_form_errors(form) == (
        "City: Ensure this value has at most 3 characters (it has 5). "
        "Day: Enter a valid date. Nothing matches."
    )


def test_a_valid_form_has_no_message():
    form = forms.Form({})
    assert form.is_valid()
    assert form_errors(form) == "" and labelled_form_errors(form) == ""
