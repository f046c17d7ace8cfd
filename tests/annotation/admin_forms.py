"""Posting admin forms back as a browser would, in tests."""


def form_data(form) -> dict:
    """What a browser would send back for a rendered form, unchanged."""
    data = {}
    for name in form.fields:
        value = form[name].value()
        if value is None or value is False:
            continue  # unticked boxes and empty selects send nothing
        data[form.add_prefix(name)] = [str(v) for v in value] if isinstance(value, list) else str(value)
    return data


def change_page_data(response) -> dict:
    """A change form with its inline formsets, as posted back unchanged."""
    data = form_data(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        data.update(form_data(formset.management_form))
        for form in formset.forms:
            data.update(form_data(form))
    return data
