"""The agreement report's default: every usable annotation, stated first on the page (issue 33).

A subsample to the study's target used to be the default: after two rejections most clips fell
below it and were left out without a word, and a study aiming at 1 annotation a clip had no report.
"""

import html

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from evaluation.services.agreement_reports import report_parameters
from tests.evaluation.builders import annotated_study

pytestmark = pytest.mark.django_db
PEOPLE = [f"{i:024x}" for i in range(1, 5)]


def one_annotation_a_clip():
    clips = {f"c{i}": (5, "en", "", "") for i in range(6)}
    annotations = [
        (key, PEOPLE[i % len(PEOPLE)], [2 if w == i % 5 else 0 for w in range(5)], False, 9.0)
        for i, key in enumerate(clips)
    ]
    return annotated_study(clips=clips, annotations=annotations, target_annotations=1)


def page(study):
    return reverse("admin:evaluation_agreementreport_study", args=[study.pk])


def test_the_default_is_every_usable_annotation():
    study = one_annotation_a_clip()

    assert report_parameters(study=study).subsample is None


def test_the_report_page_of_a_study_aiming_at_one_annotation_a_clip_computes_and_shows(
    client, django_capture_on_commit_callbacks
):
    study = one_annotation_a_clip()
    client.force_login(User.objects.create_superuser("boss", "", "a long admin password"))

    first = client.get(page(study))
    assert first.status_code == 200
    form = first.context["form"]
    defaults = {name: "" if value is None else value for name, value in form.initial.items() if value is not False}
    with django_capture_on_commit_callbacks(execute=True):
        posted = client.post(page(study), defaults)
    assert posted.status_code == 302
    shown = client.get(posted["Location"])

    assert shown.status_code == 200
    text = html.unescape(shown.content.decode())
    assert "Computed from 6 of 6 usable annotations. Every usable annotation is used" in text
