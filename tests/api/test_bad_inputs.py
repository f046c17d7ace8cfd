"""Each bad input issue 30 found answered 500 or was accepted: now a 400 that names the problem, with
nothing written (no row, no stored file).

- archives: a file named .zip that is not one, `audio/x` beside `audio/x/y.wav`, a 300-character
  entry name, to each endpoint that takes one (dataset imports, listening-form uploads, corpus
  imports);
- studies: an attention check or worked example whose clip is from another corpus, a negative
  reward (through the API and the study admin);
- the agreement report page, and POST agreement-reports/, of a study whose target is 1."""

import html
import io
import zipfile

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import AttentionCheck, Clip, Corpus, ImportJob, ImportSlot, Study
from evaluation.models import LabelSet
from tests.annotation.factories import ClipFactory, CorpusFactory, StudyFactory
from tests.api.callers import staff_with, token_client

pytestmark = pytest.mark.django_db


def zipped(entries: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries:
            archive.writestr(name, data)
    return buffer.getvalue()


LONG_NAME = "a" * 296 + ".wav"  # 300 characters: past the 255 bytes a file name may have
ARCHIVES = {
    "not a zip": (b"PK but not really: a text file named .zip\n" * 20, "a .zip archive"),
    "a file where a folder is needed": (
        zipped([("audio/x", b"a file"), ("audio/x/y.wav", b"RIFF"), ("gold_df.json", b"")]),
        "entry 'audio/x' is a file, but 'audio/x/y.wav' needs a folder of that name",
    ),
    "a 300-character name": (
        zipped([(LONG_NAME, b"RIFF"), ("gold_df.json", b"")]),
        "has a name of 300 bytes; at most 255 are taken",
    ),
}


def nothing_written(media_storage) -> bool:
    stored = [path for path in media_storage.rglob("*") if path.is_file()] if media_storage.exists() else []
    return (
        stored == []
        and not Corpus.objects.exists()
        and not Clip.objects.exists()
        and not LabelSet.objects.exists()
        and not Study.objects.exists()
        and not ImportJob.objects.exists()
        and not ImportSlot.objects.exists()  # the request's import slot is given back
    )


@pytest.mark.parametrize("case", ARCHIVES)
def test_a_bad_archive_to_the_dataset_import_is_400_naming_it(case, media_storage):
    data, says = ARCHIVES[case]
    client = token_client(staff_with("evaluation.add_labelset"))

    response = client.post(
        "/api/v1/dataset-imports/",
        {"archive": SimpleUploadedFile("dataset.zip", data), "format": "emphassess", "name": "x"},
        format="multipart",
    )

    assert response.status_code == 400, response.content
    assert response.json()["detail"].startswith("dataset.zip: ") and says in response.json()["detail"]
    assert nothing_written(media_storage)


@pytest.mark.parametrize("case", ARCHIVES)
def test_a_bad_archive_to_the_listening_form_upload_is_400_naming_it(case, media_storage):
    data, says = ARCHIVES[case]
    client = token_client(staff_with("annotation.add_study", "annotation.add_listeningformitem"))

    response = client.post(
        "/api/v1/studies/form-upload/",
        {"file": SimpleUploadedFile("form.zip", data), "study_name": "pilot"},
        format="multipart",
    )

    assert response.status_code == 400, response.content
    detail = response.json()["detail"]
    assert detail.startswith("form.zip: ") and says in detail
    assert "/tmp" not in detail  # the server's temporary paths are not the client's business
    assert nothing_written(media_storage)


@pytest.mark.parametrize("case", ARCHIVES)
def test_a_bad_archive_to_the_corpus_import_is_400_before_it_is_stored(case, media_storage):
    data, says = ARCHIVES[case]
    client = token_client(staff_with("annotation.add_importjob", "annotation.view_importjob"))

    response = client.post(
        "/api/v1/import-jobs/", {"archive": SimpleUploadedFile("corpus.zip", data), "corpus_name": "c"}
    )

    assert response.status_code == 400, response.content
    (message,) = response.json()["archive"]
    assert message.startswith("corpus.zip: ") and says in message
    assert nothing_written(media_storage)


def test_an_attention_check_from_another_corpus_is_refused_through_the_api():
    study = StudyFactory()
    ClipFactory(corpus=study.corpus, transcript="one two three")
    stranger = ClipFactory(corpus=CorpusFactory(name="elsewhere"), transcript="one two three")
    client = token_client(staff_with("annotation.change_study", "annotation.view_study"))

    response = client.patch(
        f"/api/v1/studies/{study.pk}/",
        {"attention_checks": [{"clip": stranger.pk, "expected": {"0": 2}}]},
        format="json",
    )

    assert response.status_code == 400, response.json()
    (message,) = response.json()["attention_checks"]["0"]["clip"]
    assert message == (
        f"Clip {stranger.external_id!r} is from corpus 'elsewhere'; study {study.name!r} uses corpus "
        f"{study.corpus.name!r}: choose one of its clips."
    )
    assert not AttentionCheck.objects.exists()


def test_a_worked_example_from_another_corpus_is_refused_through_the_api():
    study = StudyFactory()
    stranger = ClipFactory(corpus=CorpusFactory(name="elsewhere"), transcript="one two three")
    client = token_client(staff_with("annotation.change_study", "annotation.view_study"))

    response = client.patch(
        f"/api/v1/studies/{study.pk}/", {"example_clip": stranger.pk, "example_levels": [0, 2, 0]}, format="json"
    )

    assert response.status_code == 400, response.json()
    assert "is from corpus 'elsewhere'" in response.json()["example_clip"][0]
    study.refresh_from_db()
    assert study.example_clip is None and study.example_levels == []


def test_a_clip_of_the_studys_own_corpus_is_still_taken():
    study = StudyFactory()
    own = ClipFactory(corpus=study.corpus, transcript="one two three")
    client = token_client(staff_with("annotation.change_study", "annotation.view_study"))

    response = client.patch(
        f"/api/v1/studies/{study.pk}/",
        {
            "example_clip": own.pk,
            "example_levels": [0, 2, 0],
            "attention_checks": [{"clip": own.pk, "expected": {"1": 2}}],
        },
        format="json",
    )

    assert response.status_code == 200, response.json()
    assert AttentionCheck.objects.get().clip == own


def test_a_negative_reward_is_refused_through_the_api_and_the_admin(client):
    study = StudyFactory()
    api = token_client(staff_with("annotation.change_study", "annotation.view_study"))

    response = api.patch(f"/api/v1/studies/{study.pk}/", {"reward": "-2.50"}, format="json")

    assert response.status_code == 400 and response.json() == {
        "reward": ["Ensure this value is greater than or equal to 0."]
    }
    study.refresh_from_db()
    assert study.reward == 0


def test_the_study_admin_refuses_another_corpus_clip_and_a_negative_reward(admin_client):
    from tests.annotation.admin_forms import change_page_data

    study = StudyFactory()
    stranger = ClipFactory(corpus=CorpusFactory(name="elsewhere"), transcript="one two three")
    url = reverse("admin:annotation_study_change", args=[study.pk])
    data = change_page_data(admin_client.get(url))
    data.update({"example_clip": stranger.pk, "reward": "-1"})

    response = admin_client.post(url, data)

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "is from corpus 'elsewhere'" in errors["example_clip"][0]
    assert errors["reward"] == ["Ensure this value is greater than or equal to 0."]
    study.refresh_from_db()
    assert study.example_clip is None and study.reward == 0


@pytest.fixture
def target_one_study():
    from tests.evaluation.builders import golden_study

    study = golden_study()
    study.target_annotations = 1
    study.save(update_fields=["target_annotations"])
    return study


def test_the_agreement_report_page_of_a_study_aiming_at_one_annotation_shows_every_annotation(client, target_one_study):
    user = User.objects.create_superuser("boss", "", "a long admin password")
    client.force_login(user)
    page = reverse("admin:evaluation_agreementreport_study", args=[target_one_study.pk])

    response = client.get(page)

    # The default is every usable annotation (issue 33), whatever the target.
    assert response.status_code == 200
    assert response.context["parameters"].subsample is None
    # A subsample of 1 is still no agreement: the form says why.
    refused = client.get(page, {"subsample": 1})
    assert refused.status_code == 400
    assert "Agreement needs at least 2 annotations per clip" in html.unescape(refused.content.decode())


def test_an_agreement_report_of_such_a_study_through_the_api_takes_every_annotation(target_one_study):
    client = token_client(staff_with("evaluation.add_agreementreport"))

    accepted = client.post("/api/v1/agreement-reports/", {"study": target_one_study.pk}, format="json")

    assert accepted.status_code == 202, accepted.json()
    assert accepted.json()["parameters"]["subsample"] is None
