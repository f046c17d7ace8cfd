"""Form fields shared by the admin and the staff forms."""

from django import forms
from django.core.exceptions import ValidationError


class JSONFormField(forms.JSONField):
    """Django's JSON form field, with JSON nested too deeply for the parser refused as invalid input
    (Django's lets the parser's RecursionError through: a 500 for one pasted value)."""

    def to_python(self, value):
        try:
            return super().to_python(value)
        except RecursionError:
            raise ValidationError("Enter a valid JSON: it is nested too deeply.", code="invalid") from None

    def bound_data(self, data, initial):
        try:
            return super().bound_data(data, initial)
        except RecursionError:
            return forms.fields.InvalidJSONInput(data)
