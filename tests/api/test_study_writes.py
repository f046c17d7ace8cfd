"""Studies created and configured through the API, with the admin's checks: the selection, the
screening questions, the attention checks' expected answers, "Set live"; forms from items.jsonl;
every write atomic and behind its permission."""

import io
import zipfile

import pytest

from annotation.models import AttentionCheck, PrerequisiteQuestion, Study, StudyItem
from tests.annotation.factories import ClipFactory, CorpusFactory, StudyFactory
from tests.annotation.test_import_listening_form_items import FormFolder
from tests.api.callers import staff_with, token_client

pytestmark = pytest.mark.django_db

WRITES = ("annotation.add_study", "annotation.change_study", "annotation.view_study")
SCREENING = [{"text": "Are you 18 or older?", "choices": ["Yes", "No"], "accepted": ["Yes"]}]


@pytest.fixture
def corpus():
    corpus = CorpusFactory(name="voices")
    for n in range(4):
        ClipFactory(corpus=corpus, external_id=f"en-{n}", language="en", transcript="please mark the word blue")
    ClipFactory(corpus=corpus, external_id="de-0", language="de")
    return corpus


@pytest.fixture
def api():
    return token_client(staff_with(*WRITES))


def create(api, corpus, **fields):
    body = {"name": "Stress study", "corpus": corpus.pk, "selection": {"languages": ["en"]}, **fields}
    return api.post("/api/v1/studies/", body, format="json")


def test_a_study_is_created_with_its_settings_questions_and_checks(api, corpus):
    check_clip = corpus.clips.get(external_id="en-0")  # not one of the study's clips: refused (issue 33)
    reply = create(
        api,
        corpus,
        selection={"clip_ids": ["en-1", "en-2", "en-3"]},
        clips_per_task=3,
        target_annotations=2,
        required_coverage=0.9,
        sound_check=True,
        consent_text="I agree.",
        completion_code="DONE1234",
        prerequisites=SCREENING,
        attention_checks=[{"clip": check_clip.pk, "kind": "instructed", "expected": {"4": 2}}],
    )

    assert reply.status_code == 201, reply.json()
    body = reply.json()
    study = Study.objects.get(pk=body["id"])
    assert (study.language, study.clips_per_task, study.target_annotations) == ("en", 3, 2)
    assert (study.required_coverage, study.sound_check, study.completion_code) == (0.9, True, "DONE1234")
    assert study.items.count() == 3 and body["clips"] == 3
    assert [(q["text"], q["accepted"]) for q in body["prerequisites"]] == [("Are you 18 or older?", ["Yes"])]
    check = AttentionCheck.objects.get(study=study)
    assert (check.expected, check.rule, body["attention_checks"][0]["rule"]) == ({"4": 2}, "at_least", "at_least")


def test_an_attention_check_on_one_of_the_studys_own_clips_is_refused(api, corpus):
    own = corpus.clips.get(external_id="en-0")

    reply = create(api, corpus, attention_checks=[{"clip": own.pk, "expected": {"4": 2}}])

    assert reply.status_code == 400
    (message,) = reply.json()["attention_checks"]["0"]["clip"]
    assert message.startswith("Clip 'en-0' is one of the study's own clips")
    assert not Study.objects.exists() and not StudyItem.objects.exists()


def test_a_selection_naming_an_unknown_clip_is_refused_and_creates_nothing(api, corpus):
    reply = create(api, corpus, selection={"clip_ids": ["en-0", "typo"]})

    assert reply.status_code == 400
    assert reply.json() == {"clip_ids": ["No clip of corpus 'voices' is called: typo"]}
    assert not Study.objects.exists()


def test_an_attention_check_outside_its_clip_is_refused_naming_the_row(api, corpus):
    clip = corpus.clips.get(external_id="en-0")

    reply = create(api, corpus, attention_checks=[{"clip": clip.pk, "expected": {"9": 2}}])

    assert reply.status_code == 400
    assert "Word index 9 is outside clip" in reply.json()["attention_checks"]["0"]["expected"][0]
    assert not Study.objects.exists() and not StudyItem.objects.exists()


def test_a_question_whose_accepted_answer_is_not_offered_is_refused(api, corpus):
    study = StudyFactory(corpus=corpus)
    before = list(study.prerequisites.values_list("text", flat=True))

    reply = api.patch(
        f"/api/v1/studies/{study.pk}/",
        {"clips_per_task": 5, "prerequisites": [{"text": "Q?", "choices": ["Yes", "No"], "accepted": ["Maybe"]}]},
        format="json",
    )

    assert reply.status_code == 400
    assert "not: Maybe" in reply.json()["prerequisites"]["0"]["accepted"][0]
    study.refresh_from_db()
    assert study.clips_per_task != 5 and list(study.prerequisites.values_list("text", flat=True)) == before


def test_settings_and_questions_change_by_patch(api, corpus):
    study = Study.objects.get(pk=create(api, corpus).json()["id"])

    reply = api.patch(
        f"/api/v1/studies/{study.pk}/",
        {"target_annotations": 7, "max_marked_fraction": None, "prerequisites": SCREENING},
        format="json",
    )

    assert reply.status_code == 200, reply.json()
    study.refresh_from_db()
    assert (study.target_annotations, study.max_marked_fraction) == (7, None)
    assert list(PrerequisiteQuestion.objects.filter(study=study).values_list("text", flat=True)) == [
        SCREENING[0]["text"]
    ]
    bad = api.patch(f"/api/v1/studies/{study.pk}/", {"required_coverage": 2}, format="json")
    assert bad.status_code == 400 and "required_coverage" in bad.json()


def test_set_live_is_refused_with_what_is_missing_as_in_the_admin(api, corpus):
    study = Study.objects.get(pk=create(api, corpus, consent_text="").json()["id"])

    reply = api.post(f"/api/v1/studies/{study.pk}/live/")

    assert reply.status_code == 400
    assert "asks for 1 attention check(s) per task but has 0" in reply.json()["status"][0]
    api.patch(f"/api/v1/studies/{study.pk}/", {"attention_checks_per_task": 0}, format="json")
    assert "no consent text" in api.post(f"/api/v1/studies/{study.pk}/live/").json()["status"][0]
    api.patch(f"/api/v1/studies/{study.pk}/", {"consent_text": "I agree."}, format="json")
    assert api.post(f"/api/v1/studies/{study.pk}/live/").json()["status"] == "live"
    assert api.post(f"/api/v1/studies/{study.pk}/pause/").json()["status"] == "paused"
    assert api.post(f"/api/v1/studies/{study.pk}/close/").json()["status"] == "closed"


def test_writes_need_their_permissions(corpus):
    reader = token_client(staff_with("annotation.view_study"))
    study = StudyFactory(corpus=corpus)

    assert create(reader, corpus).status_code == 403
    assert reader.patch(f"/api/v1/studies/{study.pk}/", {"clips_per_task": 2}, format="json").status_code == 403
    assert reader.post(f"/api/v1/studies/{study.pk}/live/").status_code == 403


def form_zip(folder) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    buffer.seek(0)
    buffer.name = "pilot.zip"
    return buffer


def test_a_listening_form_is_uploaded_as_the_import_command_reads_it(tmp_path):
    folder = FormFolder(tmp_path / "pilot")
    folder.stresstest(1)
    folder.stresstest(2)
    api = token_client(staff_with(*WRITES, "annotation.add_listeningformitem"))

    reply = api.post(
        "/api/v1/studies/form-upload/",
        {"file": form_zip(folder.write()), "study_name": "pilot form"},
        format="multipart",
    )

    assert reply.status_code == 201, reply.json()
    study = Study.objects.get(name="pilot form")
    assert study.kind == Study.Kind.LISTENING_FORM and study.form_items.count() == 2
    assert reply.json()["kind"] == "form" and reply.json()["clips"] == 2


def test_a_form_with_a_bad_line_is_refused_naming_file_line_and_field(tmp_path):
    folder = FormFolder(tmp_path / "pilot")
    folder.stresstest(1)
    folder.stresstest(2, audio="audio/missing.wav")
    api = token_client(staff_with(*WRITES, "annotation.add_listeningformitem"))

    reply = api.post(
        "/api/v1/studies/form-upload/", {"file": form_zip(folder.write()), "study_name": "pilot"}, format="multipart"
    )

    assert reply.status_code == 400
    [problem] = reply.json()["problems"]
    assert (problem["file"], problem["line"], problem["field"]) == ("items.jsonl", 2, "audio")
    assert not Study.objects.exists()
    assert token_client(staff_with(*WRITES)).post("/api/v1/studies/form-upload/", {}).status_code == 403


def test_the_default_screening_questions_are_in_the_interface_language(api, corpus):
    reply = create(api, corpus, interface_language="de")

    assert reply.status_code == 201, reply.json()
    questions = [question["text"] for question in reply.json()["prerequisites"]]
    assert reply.json()["interface_language"] == "de"
    assert "Kopfhörer" in " ".join(questions), questions


def test_the_headphone_check_is_set_through_the_api_with_the_admins_checks(api, corpus):
    reply = create(api, corpus)
    assert reply.status_code == 201, reply.json()
    study = Study.objects.get(pk=reply.json()["id"])
    assert study.headphone_check == Study.HeadphoneCheck.HUGGINS  # a new emphasis study's default

    url = f"/api/v1/studies/{study.pk}/"
    refused = api.patch(url, {"headphone_check_trials": 4, "huggins_pass_mark": 5}, format="json")
    assert refused.status_code == 400
    assert "The Huggins pitch test has 4 trials: at most that many can be right." in str(refused.json())
    study.refresh_from_db()
    assert study.headphone_check_trials == 6  # nothing changed

    body = {"headphone_check": "both", "antiphase_pass_mark": 6, "headphone_check_tries": 2}
    changed = api.patch(url, {**body, "headphone_check_screens_out": False}, format="json")
    assert changed.status_code == 200, changed.json()
    study.refresh_from_db()
    assert (study.headphone_check, study.antiphase_pass_mark, study.headphone_check_tries) == ("both", 6, 2)
    assert study.headphone_check_screens_out is False
    assert api.patch(url, {"headphone_check": "beats"}, format="json").status_code == 400
