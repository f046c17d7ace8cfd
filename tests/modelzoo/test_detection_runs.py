"""Detection runs (tasks in-process): a tiny acoustic benchmark run's detector over a listening
form's stressed_words items and over a CAST set's renditions, its predictions stored as a detector
system's outputs; a run again replaces them; what is refused; the admin and the API, and who may
use them."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotation.models import Corpus, ListeningFormItem, Study
from annotation.services.corpus_import import corpus_import
from evaluation.models import CastItem, CastRendition, CastSet, RenditionDetection, System, SystemOutput
from modelzoo.models import BenchmarkRun, DetectionRun
from modelzoo.plans import Plan
from modelzoo.services import detection_runs
from modelzoo.services.benchmark_runs import benchmark_runs_launch
from modelzoo.services.detection_runs import DetectionRefused, detection_run_create
from tests.annotation.factories import StudyFactory
from tests.api.callers import staff_with, token_client
from tests.audio_files import CorpusFolder
from tests.modelzoo.builders import tiny_label_set
from tests.modelzoo.helpers import TINY_WAV2VEC2, TINY_WHISPER

pytestmark = pytest.mark.django_db
pytest.importorskip("parselmouth")
Status = DetectionRun.Status
SENTENCES = ("I never said she stole it", "we took the money", "she said we never took it")
RUNS = "/api/v1/detection-runs/"
ADD = reverse("admin:modelzoo_detectionrun_add")
# one quick epoch on the CPU, as the benchmark worker's tests train the tiny backbones
TINY_TRAINING = {
    "epochs": 1,
    "learning_rate": 1e-3,
    "warmup_ratio": 0.0,
    "gradient_accumulation": 1,
    "batch_size": 8,
    "device": "cpu",
}
LAUNCH_PERMS = ("modelzoo.add_detectionrun", "modelzoo.view_detectionrun", "modelzoo.view_benchmarkrun")


@pytest.fixture
def source_run(corpus_folder, django_capture_on_commit_callbacks) -> BenchmarkRun:
    label_set = tiny_label_set(corpus_folder)
    with django_capture_on_commit_callbacks(execute=True):
        [run] = benchmark_runs_launch(
            label_set=label_set, detector="acoustic", label_mode="both", plan=Plan("multilingual"), resamples=0
        )
    run.refresh_from_db()
    assert run.status == BenchmarkRun.Status.SUCCEEDED, run.error
    return run


@pytest.fixture
def target_corpus(tmp_path) -> Corpus:
    """Three English clips with timed words (the acoustic baseline measures each word)."""
    folder = CorpusFolder(tmp_path / "targets")
    for index, sentence in enumerate(SENTENCES):
        words = sentence.split()
        timed = [
            {"text": w, "start": round(0.1 + 0.2 * k, 3), "end": round(0.3 + 0.2 * k, 3)} for k, w in enumerate(words)
        ]
        folder.add(f"target-{index}", sentence, seconds=0.3 + 0.2 * len(words), language="en", words=timed)
    folder.write_jsonl()
    corpus_import(path=folder.root, corpus_name="targets")
    return Corpus.objects.get(name="targets")


@pytest.fixture
def form_study(target_corpus) -> Study:
    """A listening form: an SSD item per clip, a StressTest question (not marked) and an attention check."""
    study = StudyFactory(corpus=target_corpus, kind=Study.Kind.LISTENING_FORM, slug="stresstest", name="StressTest")
    clips = list(target_corpus.clips.order_by("external_id"))
    for index, clip in enumerate(clips):
        ListeningFormItem.objects.create(
            study=study,
            external_id=f"st-{index}-ssd",
            item_type=ListeningFormItem.Type.STRESSED_WORDS,
            clip=clip,
            gold=[int(k == 1) for k in range(clip.words.count())],
        )
    ListeningFormItem.objects.create(
        study=study,
        external_id="st-0",
        item_type=ListeningFormItem.Type.SINGLE_CHOICE,
        clip=clips[0],
        options=["Someone else said it", "I only implied it"],
        gold=0,
    )
    ListeningFormItem.objects.create(
        study=study,
        external_id="check",
        item_type=ListeningFormItem.Type.STRESSED_WORDS,
        clip=clips[1],
        gold=[1, 0, 0, 0],
        settings={"attention_check": True},
    )
    return study


@pytest.fixture
def cast_set(target_corpus) -> CastSet:
    """Two items, each rendered by one TTS system for both sides; one clip serves two renditions."""
    cast_set = CastSet.objects.create(name="cast pilot", corpus=target_corpus)
    tts = System.objects.create(name="some tts", kind=System.Kind.TTS)
    clips = list(target_corpus.clips.order_by("external_id"))
    for index, clip in enumerate(clips[:2]):
        words = SENTENCES[index].split()
        item = CastItem.objects.create(
            cast_set=cast_set,
            external_id=f"c{index}",
            sentence=SENTENCES[index],
            words=words,
            context_a="a",
            context_b="b",
            word_a=1,
            word_b=3,
        )
        CastRendition.objects.create(item=item, system=tts, side="A", mode="context", clip=clip)
        CastRendition.objects.create(item=item, system=tts, side="B", mode="context", clip=clips[2 - index])
    return cast_set


def run_now(capture, **arguments) -> DetectionRun:
    with capture(execute=True):
        run = detection_run_create(**arguments)
    run.refresh_from_db()
    return run


# --- the service and the worker ---------------------------------------------------------------


def test_a_detector_marks_the_stressed_words_of_a_forms_items(
    source_run, form_study, django_capture_on_commit_callbacks
):
    run = run_now(django_capture_on_commit_callbacks, source_run=source_run, study=form_study)

    assert run.status == Status.SUCCEEDED, run.error
    system = run.system
    assert system.kind == System.Kind.DETECTOR and system.name == f"acoustic #{source_run.pk} (tiny v1)"
    assert system.metadata == {
        "source_run": source_run.pk,
        "detector": "acoustic",
        "backbone": None,
        "label_set": "tiny v1",
        "label_set_id": source_run.label_set_id,
        "label_mode": "both",
        "setting": "multilingual",
    }
    outputs = list(SystemOutput.objects.filter(system=system).select_related("form_item__clip").order_by("pk"))
    assert [o.form_item.external_id for o in outputs] == ["st-0-ssd", "st-1-ssd", "st-2-ssd"]  # no question, no check
    for output in outputs:
        assert (output.suite, output.pole_order, output.line) == ("stresstest", "", 0)
        words = output.form_item.clip.words.count()
        assert output.raw == sorted(set(output.raw)) and all(0 <= i < words for i in output.raw)
    assert (run.outputs_count, run.clips_count) == (3, 3)
    assert run.words_count == sum(len(s.split()) for s in SENTENCES)
    assert run.stressed_count == sum(len(o.raw) for o in outputs)
    assert run.phase == "finished" and run.attempts == 1


def test_a_detector_marks_the_stressed_words_of_a_cast_sets_renditions(
    source_run, cast_set, django_capture_on_commit_callbacks
):
    run = run_now(django_capture_on_commit_callbacks, source_run=source_run, cast_set=cast_set)

    assert run.status == Status.SUCCEEDED, run.error
    detections = list(RenditionDetection.objects.filter(detector=run.system).select_related("rendition__clip"))
    assert len(detections) == CastRendition.objects.count() == run.outputs_count == 4
    assert run.clips_count == 3  # one clip serves two renditions, and is predicted once
    for detection in detections:
        words = detection.rendition.clip.words.count()
        assert all(0 <= i < words for i in detection.stressed)
    same_clip = [d.stressed for d in detections if d.rendition.clip.external_id == "target-1"]
    assert len(same_clip) == 2 and same_clip[0] == same_clip[1]
    assert run.words_count == sum(d.rendition.clip.words.count() for d in detections)


def test_a_run_again_replaces_that_systems_outputs_and_leaves_others_alone(
    source_run, form_study, cast_set, django_capture_on_commit_callbacks, monkeypatch
):
    first = run_now(django_capture_on_commit_callbacks, source_run=source_run, study=form_study)
    other = System.objects.create(name="a model", kind=System.Kind.MODEL)
    item = ListeningFormItem.objects.get(external_id="st-0-ssd")
    SystemOutput.objects.create(system=other, suite="stresstest", form_item=item, raw=[0], line=1)
    run_now(django_capture_on_commit_callbacks, source_run=source_run, cast_set=cast_set)
    kept = set(SystemOutput.objects.filter(system=first.system).values_list("pk", flat=True))

    class EverythingStressed:
        def predict(self, clips, progress=None, should_stop=None):
            from modelzoo.training.detectors.base import ClipPrediction

            return [ClipPrediction(c.clip_id, [1] * len(c.words), [1.0] * len(c.words)) for c in clips]

    monkeypatch.setattr(detection_runs, "load_checkpoint", lambda *args: EverythingStressed())
    second = run_now(django_capture_on_commit_callbacks, source_run=source_run, study=form_study)

    assert second.status == Status.SUCCEEDED, second.error
    assert second.system == first.system and System.objects.filter(kind="detector").count() == 1
    outputs = SystemOutput.objects.filter(system=second.system).select_related("form_item__clip")
    assert outputs.count() == 3 and not kept & set(outputs.values_list("pk", flat=True))
    assert all(o.raw == list(range(o.form_item.clip.words.count())) for o in outputs)
    assert second.stressed_count == second.words_count
    assert SystemOutput.objects.get(system=other).raw == [0]  # another system's answer stays
    assert RenditionDetection.objects.filter(detector=second.system).count() == 4  # its CAST detections stay


def test_a_run_that_fails_while_storing_leaves_the_previous_outputs(
    source_run, form_study, django_capture_on_commit_callbacks, monkeypatch
):
    first = run_now(django_capture_on_commit_callbacks, source_run=source_run, study=form_study)
    before = list(SystemOutput.objects.filter(system=first.system).values_list("pk", "raw"))

    def broken(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(SystemOutput.objects, "bulk_create", broken)
    second = run_now(django_capture_on_commit_callbacks, source_run=source_run, study=form_study)

    assert second.status == Status.FAILED and "the database went away" in second.error
    assert list(SystemOutput.objects.filter(system=first.system).values_list("pk", "raw")) == before


def test_what_cannot_run_is_refused_at_launch(source_run, form_study, cast_set):
    failed = BenchmarkRun.objects.create(
        label_set=source_run.label_set,
        detector="acoustic",
        label_mode="both",
        setting_kind="multilingual",
        setting={"kind": "multilingual"},
        setting_label="multilingual",
        status=BenchmarkRun.Status.FAILED,
        error="cancelled",
    )
    scalar = BenchmarkRun.objects.get(pk=source_run.pk)
    scalar.pk, scalar.label_mode = None, BenchmarkRun.LabelMode.SCALAR
    scalar.save()
    emphasis = StudyFactory(corpus=form_study.corpus, slug="emphasis")
    empty_form = StudyFactory(corpus=form_study.corpus, slug="empty", kind=Study.Kind.LISTENING_FORM)
    cases = [
        ({"source_run": failed, "study": form_study}, f"benchmark run {failed.pk} is cancelled: only a succeeded"),
        ({"source_run": scalar, "study": form_study}, "trained for the scalar label only"),
        ({"study": form_study, "cast_set": cast_set}, "choose one target"),
        ({}, "choose one target"),
        ({"study": emphasis}, "is not a listening form"),
        ({"study": empty_form}, "has no stressed_words items"),
        ({"cast_set": CastSet.objects.create(name="empty")}, "has no renditions"),
    ]
    for given, message in cases:
        with pytest.raises(DetectionRefused, match=message):
            detection_run_create(**{"source_run": source_run, **given})
    assert not DetectionRun.objects.exists()


def test_a_checkpoint_missing_from_storage_fails_the_run(source_run, form_study, django_capture_on_commit_callbacks):
    from django.core.files.storage import default_storage

    default_storage.delete(source_run.checkpoint.name)

    run = run_now(django_capture_on_commit_callbacks, source_run=source_run, study=form_study)

    assert run.status == Status.FAILED and "checkpoint is missing" in run.error
    assert not SystemOutput.objects.exists() and run.system is None


def test_clips_without_word_times_in_a_language_with_no_aligner_fail_the_run_naming_them(
    source_run, form_study, django_capture_on_commit_callbacks
):
    from annotation.models import Clip, Word

    Word.objects.filter(clip__external_id="target-0").update(start=None, end=None)
    Clip.objects.filter(external_id="target-0").update(language="")

    run = run_now(django_capture_on_commit_callbacks, source_run=source_run, study=form_study, language="fr")

    assert run.status == Status.FAILED
    assert "needs word times" in run.error and "(fr)" in run.error


@pytest.mark.parametrize(
    ("detector", "backbone"), [("frame-classifier", TINY_WAV2VEC2), ("whisper-tokens", TINY_WHISPER)]
)
def test_a_neural_detector_is_loaded_from_its_stored_checkpoint(
    detector, backbone, corpus_folder, cast_set, checkpoint_dir, settings, django_capture_on_commit_callbacks
):
    settings.MODELZOO_CHECKPOINT_DIR = checkpoint_dir  # the tiny backbones, saved with save_pretrained
    label_set = tiny_label_set(corpus_folder)
    with django_capture_on_commit_callbacks(execute=True):
        [source] = benchmark_runs_launch(
            label_set=label_set,
            detector=detector,
            backbone=backbone,
            label_mode="both",
            plan=Plan("multilingual"),
            config=TINY_TRAINING,
            resamples=0,
        )
    source.refresh_from_db()
    assert source.status == BenchmarkRun.Status.SUCCEEDED, source.error

    run = run_now(django_capture_on_commit_callbacks, source_run=source, cast_set=cast_set)

    assert run.status == Status.SUCCEEDED, run.error
    assert run.system.metadata["backbone"] == backbone
    detections = RenditionDetection.objects.filter(detector=run.system).select_related("rendition__clip")
    assert detections.count() == run.outputs_count == 4
    assert all(0 <= i < d.rendition.clip.words.count() for d in detections for i in d.stressed)


def test_the_task_goes_to_the_gpu_queue_and_acknowledges_late():
    from config.celery import app

    app.loader.import_default_modules()
    assert app.amqp.router.route({}, DetectionRun.TASK_NAME)["queue"].name == "gpu"
    assert app.tasks[DetectionRun.TASK_NAME].acks_late


# --- the admin ----------------------------------------------------------------------------------


def browser(*perms) -> Client:
    client = Client()
    client.force_login(staff_with(*perms))
    return client


def test_the_admin_runs_a_detector_over_a_form_and_shows_the_run(
    client, source_run, form_study, django_capture_on_commit_callbacks
):
    client.force_login(get_user_model().objects.create_superuser("boss", "boss@example.com", "a long password"))
    page = client.get(f"{ADD}?source_run={source_run.pk}")
    assert page.status_code == 200 and page.context["form"]["source_run"].value() == str(source_run.pk)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(ADD, {"source_run": source_run.pk, "study": form_study.pk, "language": ""})

    run = DetectionRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "admin:modelzoo_detectionrun_change", args=[run.pk]
    )
    assert run.status == Status.SUCCEEDED and run.created_by.username == "boss"
    shown = client.get(response["Location"]).content.decode()
    assert run.system.name in shown and "listening form StressTest" in shown
    assert run.system.name in client.get(reverse("admin:modelzoo_detectionrun_changelist")).content.decode()


def test_the_admin_form_asks_for_one_target_and_a_succeeded_run(client, source_run, form_study, cast_set):
    client.force_login(get_user_model().objects.create_superuser("boss", "boss@example.com", "a long password"))
    failed = BenchmarkRun.objects.create(
        label_set=source_run.label_set,
        detector="acoustic",
        label_mode="both",
        setting_kind="multilingual",
        setting={"kind": "multilingual"},
        setting_label="multilingual",
        status=BenchmarkRun.Status.FAILED,
    )

    both = client.post(ADD, {"source_run": source_run.pk, "study": form_study.pk, "cast_set": cast_set.pk})
    neither = client.post(ADD, {"source_run": source_run.pk})
    not_succeeded = client.post(ADD, {"source_run": failed.pk, "cast_set": cast_set.pk})

    for response in (both, neither):
        assert response.status_code == 200 and "Choose one target" in response.content.decode()
    assert "source_run" in not_succeeded.context["form"].errors
    assert not DetectionRun.objects.exists()


def test_who_may_run_a_detector_in_the_admin(source_run, form_study, cast_set, django_capture_on_commit_callbacks):
    assert browser("modelzoo.view_detectionrun", "modelzoo.view_benchmarkrun").get(ADD).status_code == 403
    assert browser("modelzoo.add_detectionrun", "modelzoo.view_detectionrun").get(ADD).status_code == 403
    launcher = browser(*LAUNCH_PERMS)
    assert launcher.get(ADD).status_code == 200
    # the target's clips are read too: a form needs view_study, a CAST set view_castset
    assert launcher.post(ADD, {"source_run": source_run.pk, "study": form_study.pk}).status_code == 403
    assert launcher.post(ADD, {"source_run": source_run.pk, "cast_set": cast_set.pk}).status_code == 403
    assert not DetectionRun.objects.exists()
    with django_capture_on_commit_callbacks(execute=False):
        allowed = browser(*LAUNCH_PERMS, "evaluation.view_castset").post(
            ADD, {"source_run": source_run.pk, "cast_set": cast_set.pk}
        )
    assert allowed.status_code == 302 and DetectionRun.objects.get().cast_set == cast_set
    reader = browser("modelzoo.view_detectionrun")
    run = DetectionRun.objects.get()
    assert reader.get(reverse("admin:modelzoo_detectionrun_change", args=[run.pk])).status_code == 200
    assert reader.post(reverse("admin:modelzoo_detectionrun_delete", args=[run.pk])).status_code == 403


# --- the API ------------------------------------------------------------------------------------


def test_the_api_runs_a_detector_over_a_cast_set_and_polls_it(source_run, cast_set, django_capture_on_commit_callbacks):
    api = token_client(staff_with(*LAUNCH_PERMS, "evaluation.view_castset"))
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(RUNS, {"source_run": source_run.pk, "cast_set": cast_set.pk}, format="json")

    assert response.status_code == 202, response.content
    launched = response.json()
    assert response["Location"] == launched["url"]
    polled = api.get(launched["url"]).json()
    assert polled["status"] == "succeeded", polled["error"]
    assert polled["system"] == f"acoustic #{source_run.pk} (tiny v1)"
    assert (polled["cast_set"], polled["study"], polled["outputs_count"]) == (cast_set.pk, None, 4)
    listed = api.get(f"{RUNS}?source_run={source_run.pk}").json()["results"]
    assert [run["id"] for run in listed] == [launched["id"]]


def test_the_api_refuses_what_cannot_run(source_run, form_study, cast_set):
    api = token_client(staff_with(*LAUNCH_PERMS, "annotation.view_study", "evaluation.view_castset"))
    failed = BenchmarkRun.objects.create(
        label_set=source_run.label_set,
        detector="acoustic",
        label_mode="both",
        setting_kind="multilingual",
        setting={"kind": "multilingual"},
        setting_label="multilingual",
        status=BenchmarkRun.Status.FAILED,
    )

    refused = api.post(RUNS, {"source_run": failed.pk, "study": form_study.pk}, format="json")
    both = api.post(RUNS, {"source_run": source_run.pk, "study": form_study.pk, "cast_set": cast_set.pk}, format="json")

    assert refused.status_code == 400 and "only a succeeded run" in refused.json()["detail"]
    assert both.status_code == 400 and "choose one target" in both.json()["detail"]
    assert not DetectionRun.objects.exists()


def test_who_may_use_the_api(source_run, form_study):
    payload = {"source_run": source_run.pk, "study": form_study.pk}
    assert Client().get(RUNS).status_code == 401
    assert token_client(staff_with("modelzoo.view_benchmarkrun")).get(RUNS).status_code == 403
    for perms in (
        ("modelzoo.view_detectionrun", "modelzoo.view_benchmarkrun", "annotation.view_study"),  # no add
        ("modelzoo.add_detectionrun", "annotation.view_study"),  # may not read benchmark runs
        LAUNCH_PERMS,  # may not read the study
    ):
        response = token_client(staff_with(*perms)).post(RUNS, payload, format="json")
        assert response.status_code == 403, perms
    assert not DetectionRun.objects.exists()


def test_the_endpoint_is_in_the_schema():
    schema = token_client(staff_with()).get("/api/schema/?format=json").json()
    assert {RUNS, RUNS + "{id}/"} <= set(schema["paths"])
    assert set(schema["components"]["schemas"]["DetectionLaunchRequest"]["properties"]) == {
        "source_run",
        "study",
        "cast_set",
        "language",
    }
    assert schema["paths"][RUNS]["post"]["responses"]["202"]
