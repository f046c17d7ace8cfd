"""The label-set admin: make a set, watch it build, read it, finalize and archive it."""

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from evaluation.models import LabelSet
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db

FORM = {"name": "golden labels", "seed": 0, "split_seed": 3, "train": 0.8, "validation": 0.1, "test": 0.1,
        "resamples": 20, "subsample": ""}  # fmt: skip


def staff(client, *codenames):
    user = User.objects.create_user("researcher", password="x", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="evaluation", codename__in=codenames))
    client.force_login(user)
    return user


def make(client, study, django_capture_on_commit_callbacks, **changes):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("admin:evaluation_labelset_add"), {**FORM, "studies": [study.pk], **changes})
    assert response.status_code == 302, response.content.decode()[:2000]
    return LabelSet.objects.get(name=changes.get("name", FORM["name"]))


def test_a_set_is_made_built_shown_and_finalized(client, django_capture_on_commit_callbacks):
    study = golden_study()
    staff(client, "add_labelset", "view_labelset", "change_labelset")

    label_set = make(client, study, django_capture_on_commit_callbacks)
    assert (label_set.status, label_set.parameters["split_seed"], label_set.parameters["subsample"]) == (
        "succeeded", 3, study.target_annotations
    )  # fmt: skip

    page = client.get(reverse("admin:evaluation_labelset_change", args=[label_set.pk])).content.decode()
    assert "10 clips" in page and "Agreement of the annotations in this set" in page
    assert "clip-03 (2)" in page and "Finalize (freeze for good)" in page

    progress = client.get(
        reverse("admin:evaluation_labelset_progress", args=[label_set.pk]), headers={"HX-Request": "true"}
    )
    assert progress.status_code == 286

    client.post(reverse("admin:evaluation_labelset_finalize", args=[label_set.pk]))
    label_set.refresh_from_db()
    assert label_set.lifecycle == "final" and label_set.finalized_by.username == "researcher"
    client.post(reverse("admin:evaluation_labelset_archive", args=[label_set.pk]))
    label_set.refresh_from_db()
    assert label_set.lifecycle == "archived"


def test_shares_must_add_up_and_studies_are_required(client, django_capture_on_commit_callbacks):
    study = golden_study()
    staff(client, "add_labelset", "view_labelset")

    response = client.post(reverse("admin:evaluation_labelset_add"), {**FORM, "studies": [study.pk], "test": 0.3})
    assert "must add up to 1" in response.content.decode()
    response = client.post(reverse("admin:evaluation_labelset_add"), FORM)
    assert "This field is required" in response.content.decode()
    assert not LabelSet.objects.exists()


def test_permissions(client, django_capture_on_commit_callbacks):
    study = golden_study()
    user = staff(client, "view_labelset")
    assert client.get(reverse("admin:evaluation_labelset_add")).status_code == 403

    user.user_permissions.add(Permission.objects.get(codename="add_labelset"))
    label_set = make(client, study, django_capture_on_commit_callbacks)
    assert client.post(reverse("admin:evaluation_labelset_finalize", args=[label_set.pk])).status_code == 403
    assert client.post(reverse("admin:evaluation_labelset_export", args=[label_set.pk])).status_code == 403
    label_set.refresh_from_db()
    assert label_set.lifecycle == "draft"


def test_a_final_set_cannot_be_deleted(client, django_capture_on_commit_callbacks):
    study = golden_study()
    staff(client, "add_labelset", "view_labelset", "change_labelset", "delete_labelset")
    label_set = make(client, study, django_capture_on_commit_callbacks)
    client.post(reverse("admin:evaluation_labelset_finalize", args=[label_set.pk]))

    assert client.get(reverse("admin:evaluation_labelset_delete", args=[label_set.pk])).status_code == 403
