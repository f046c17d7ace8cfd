"""The label-set admin: make a set, watch it build, read it, finalize and archive it."""

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from annotation.models import Clip, Speaker
from evaluation.models import LabelSet
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db

FORM = {
    "name": "golden labels",
    "seed": 0,
    "split_seed": 3,
    "train": 0.8,
    "validation": 0.1,
    "test": 0.1,
    "resamples": 20,
    "subsample": "",
}


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
        "succeeded",
        3,
        None,  # every usable annotation (issue 33)
    )

    page = client.get(reverse("admin:evaluation_labelset_change", args=[label_set.pk])).content.decode()
    assert "12 clips" in page and "Agreement of the annotations in this set" in page
    assert "Every usable annotation (no subsample)" in page and "Finalize (freeze for good)" in page

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


def test_keeping_speakers_apart_with_two_speakers_a_language_fails_and_says_which(
    client, django_capture_on_commit_callbacks
):
    # Issue 20: two speakers per language gave 8/0/0 and 12/0/0 and a build that "succeeded".
    study = golden_study()
    for i, clip in enumerate(Clip.objects.filter(corpus=study.corpus).order_by("external_id")):
        speaker, _ = Speaker.objects.get_or_create(corpus=study.corpus, name=f"{clip.language}-{i % 2}")
        Clip.objects.filter(pk=clip.pk).update(speaker=speaker)
    staff(client, "add_labelset", "view_labelset", "change_labelset")

    label_set = make(client, study, django_capture_on_commit_callbacks, split_by_speaker="on")

    assert label_set.status == "failed"
    assert not label_set.clips.exists()
    page = client.get(reverse("admin:evaluation_labelset_change", args=[label_set.pk])).content.decode()
    assert "Build failed: " in page  # the shared progress panel (templates/admin/_job_progress.html)
    for language in ("de", "en", "zh"):  # 3, 3 and 4 clips: splitting clip by clip gives no test clip either
        assert f"{language} (2 speakers: validation empty)" in page


def test_the_admin_sets_the_arousal_mapping_and_the_page_lists_what_it_missed(
    client, django_capture_on_commit_callbacks
):
    study = golden_study()  # emotions: angry, calm, happy
    Clip.objects.filter(corpus=study.corpus, external_id__in=["clip-00", "clip-01"]).update(emotion="neutral")
    staff(client, "add_labelset", "view_labelset", "change_labelset")
    form = client.get(reverse("admin:evaluation_labelset_add")).content.decode()
    assert 'name="arousal_high"' in form and "anger" in form and 'name="arousal_low"' in form

    label_set = make(
        client, study, django_capture_on_commit_callbacks, arousal_high="happy, anger", arousal_low="boredom"
    )

    assert label_set.parameters["arousal"] == {"high": ["anger", "happy"], "low": ["boredom"]}
    by_emotion = {row.emotion: row.arousal for row in label_set.clips.all()}
    assert by_emotion == {"angry": "high", "happy": "high", "calm": "", "neutral": ""}
    page = client.get(reverse("admin:evaluation_labelset_change", args=[label_set.pk])).content.decode()
    assert "Emotions without an arousal" in page
    assert "calm (" in page and "neutral (2 clips)" in page


def test_an_arousal_in_both_lists_is_refused_by_the_form(client, django_capture_on_commit_callbacks):
    study = golden_study()
    staff(client, "add_labelset", "view_labelset", "change_labelset")

    response = client.post(
        reverse("admin:evaluation_labelset_add"),
        {**FORM, "studies": [study.pk], "arousal_high": "joy", "arousal_low": "Joy"},
    )

    assert response.status_code == 200 and "emotions in both arousal lists: joy" in response.content.decode()
    assert not LabelSet.objects.exists()
