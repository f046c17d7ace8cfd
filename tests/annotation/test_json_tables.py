"""Read-only JSON fields in the admin as tables (annotation.json_tables), not a line of JSON."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.json_tables import MAX_ROWS, json_field_html
from tests.evaluation.builders import golden_study
from tests.modelzoo.builders import final_label_set


def cells(html: str) -> int:
    return html.count("<td>")


def test_an_object_of_like_objects_is_a_table_with_a_row_each_and_a_column_per_key():
    html = json_field_html({"a-1": {"reliability": 0.81234567, "se": 0.05, "words": 40}, "a-2": {"reliability": 0.5}})

    assert "<thead><tr><th scope='col'></th><th scope='col'>reliability</th><th scope='col'>se</th>" in html
    assert "<tr><th scope='row'>a-1</th><td>0.812346</td><td>0.05</td><td>40</td></tr>" in html
    assert "<tr><th scope='row'>a-2</th><td>0.5</td><td></td><td></td></tr>" in html


def test_nested_objects_lists_and_plain_values():
    html = json_field_html({"model": "dawid-skene", "proportions": [0.8, 0.1, 0.1], "off": None, "deep": {"x": True}})

    assert "<th scope='row'>model</th><td>dawid-skene</td>" in html
    assert "<td>0.8, 0.1, 0.1</td>" in html and "<td>null</td>" in html
    assert "<th scope='row'>deep</th><td><table><tbody><tr><th scope='row'>x</th><td>true</td>" in html
    assert "\n" not in html  # the admin turns line breaks into <br>


def test_text_is_escaped_and_depth_and_length_are_bounded():
    nested = {"a": {"b": {"c": {"d": {"e": 1}}}}}
    long = [{"n": n, "m": n} for n in range(MAX_ROWS + 5)]

    assert "&lt;script&gt;" in json_field_html({"name": "<script>"}) and "<script>" not in json_field_html(["<script>"])
    assert "<code>{&quot;e&quot;: 1}</code>" in json_field_html(nested)
    assert cells(json_field_html(long)) == 2 * MAX_ROWS and "… and 5 more" in json_field_html(long)


@pytest.mark.django_db
def test_a_label_sets_annotator_reliabilities_are_a_table_on_its_page(client):
    client.force_login(get_user_model().objects.create_superuser("boss", "boss@example.com", "a long password"))
    study = golden_study()
    label_set = final_label_set([study], name="modelled", annotator_model="dawid-skene", model_resamples=2)
    annotators = label_set.annotator_model["studies"][study.slug]["annotators"]

    html = client.get(reverse("admin:evaluation_labelset_change", args=[label_set.pk])).content.decode()

    some = next(iter(annotators))
    assert f"<tr><th scope='row'>{some}</th>" in html
    assert all(f"<th scope='col'>{key}</th>" in html for key in annotators[some])
    assert '{"model": "dawid-skene"' not in html and "&quot;model&quot;" not in html  # no JSON blob
