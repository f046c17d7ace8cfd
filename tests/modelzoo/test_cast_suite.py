"""CAST end to end: items and two TTS voices' renditions (generated tones) imported by the
commands, their stressed words found by the acoustic baseline (a detection run of a trained
benchmark run) and by three listeners of an emphasis study over the renditions (the real
assignment and submit services), scored per voice, mode and source; every figure against a hand
count, the detector-vs-listeners kappa against scikit-learn."""

import json

import pytest
from django.core.management import call_command
from sklearn.metrics import cohen_kappa_score

from annotation.models import Study
from annotation.services.assignment import assignment_claim
from annotation.services.studies import ClipSelection, study_create
from annotation.services.submission import annotation_submit
from evaluation.models import CastRendition, CastSet, RenditionDetection, SuiteReport
from evaluation.services.suite_reports import suite_report_request
from modelzoo.models import BenchmarkRun, DetectionRun
from modelzoo.plans import Plan
from modelzoo.services.benchmark_runs import benchmark_runs_launch
from modelzoo.services.detection_runs import detection_run_create
from tests.annotation.study_helpers import listened_to_all, ready_participant
from tests.evaluation.suites.fixtures import CAST_WORDS, write_cast_items, write_cast_renditions, write_jsonl
from tests.modelzoo.builders import tiny_label_set

pytestmark = pytest.mark.django_db
pytest.importorskip("parselmouth")

LISTENERS = 3


def marked_word(listener: int, system: str, item: str, side: str) -> int:
    """The one word each listener marks. tts-a: the intended word, except on c02's side B, where
    everyone hears word A; listener 2 hears word 0 on c01's side A (outvoted 2 to 1). tts-b: word B
    on both sides of c01 (context ignored), the intended word on c02."""
    word_a, word_b = CAST_WORDS[item]
    intended = word_a if side == "A" else word_b
    if system not in {"tts-a", "tts-b"}:  # a voice that ignores the context: B everywhere
        return word_b
    if system == "tts-a":
        if (item, side) == ("c02", "B"):
            return word_a
        if (item, side, listener) == ("c01", "A", 2):
            return 0
        return intended
    return word_b if item == "c01" else intended


@pytest.fixture
def cast_set(tmp_path) -> CastSet:
    call_command("import_cast_items", str(write_cast_items(tmp_path / "cast.jsonl")), "--set", "cast pilot")
    write_cast_renditions(tmp_path / "tts-a", system="tts-a", timed=True)
    # tts-b rendered c03 on side A only: that pair has a side missing
    folder = write_cast_renditions(tmp_path / "tts-b", system="tts-b", items=("c01", "c02"), timed=True)
    extra = write_cast_renditions(tmp_path / "tts-b-extra", system="tts-b", items=("c03",), sides=("A",), timed=True)
    (folder / "wav" / "c03-A-context.wav").write_bytes((extra / "wav" / "c03-A-context.wav").read_bytes())
    with (folder / "renditions.jsonl").open("a") as lines:
        lines.write((extra / "renditions.jsonl").read_text())
    for system in ("tts-a", "tts-b"):
        call_command(
            "import_system_outputs",
            str(tmp_path / system),
            "--suite",
            "cast",
            "--system",
            system,
            "--set",
            "cast pilot",
        )
    return CastSet.objects.get(name="cast pilot")


def listen_to_every_rendition(cast_set: CastSet) -> Study:
    study = study_create(
        name="cast listeners",
        corpus=cast_set.corpus,
        selection=ClipSelection(),
        status=Study.Status.LIVE,
        clips_per_task=cast_set.corpus.clips.count(),
        target_annotations=LISTENERS,
        attention_checks_per_task=0,
    )
    rendition_of = {
        r.clip_id: r for r in CastRendition.objects.filter(item__cast_set=cast_set).select_related("item", "system")
    }
    for listener in range(LISTENERS):
        participant = ready_participant(study)
        task = assignment_claim(participant=participant)
        for item in task.items.order_by("position"):
            rendition = rendition_of[item.clip_id]
            word = marked_word(listener, rendition.system.name, rendition.item.external_id, rendition.side)
            listened_to_all(item)
            levels = [int(index == word) for index in range(item.word_count)]
            annotation_submit(participant_id=participant.pk, item_id=item.pk, levels=levels, mismatch=False)
    return study


@pytest.fixture
def detector_run(corpus_folder, cast_set, django_capture_on_commit_callbacks) -> DetectionRun:
    label_set = tiny_label_set(corpus_folder)
    with django_capture_on_commit_callbacks(execute=True):
        [source] = benchmark_runs_launch(
            label_set=label_set, detector="acoustic", label_mode="both", plan=Plan("multilingual"), resamples=0
        )
    source.refresh_from_db()
    assert source.status == BenchmarkRun.Status.SUCCEEDED, source.error
    with django_capture_on_commit_callbacks(execute=True):
        run = detection_run_create(source_run=source, cast_set=cast_set)
    run.refresh_from_db()
    assert run.status == DetectionRun.Status.SUCCEEDED, run.error
    return run


def hand_scores(pairs: list[tuple[set, set, int, int]]) -> dict:
    """(Y_A, Y_B, A, B) per scored pair -> the three CAST means, counted the plain way."""
    hit = sum(a in y_a for y_a, _, a, _ in pairs)
    contrast = sum(a in y_a and b not in y_a for y_a, _, a, b in pairs)
    correct = sum(a in y_a and b not in y_a and b in y_b and a not in y_b for y_a, y_b, a, b in pairs)
    n = len(pairs)
    return {"hit": hit / n, "pair_contrast": contrast / n, "pair_correct": correct / n}


def test_cast_scores_per_voice_mode_and_source_match_hand_counts(
    cast_set, detector_run, django_capture_on_commit_callbacks
):
    study = listen_to_every_rendition(cast_set)
    with django_capture_on_commit_callbacks(execute=True):
        job = suite_report_request(suite="cast", cast_set=cast_set, resamples=200, seed=3)
    job.refresh_from_db()
    assert job.status == SuiteReport.Status.SUCCEEDED, job.error
    report = json.loads(job.result_json)
    groups = {(g["system"], g["mode"], g["source"]): g for g in report["groups"]}
    listeners = f"listeners: {study.name}"
    detector = f"detector: {detector_run.system.name}"

    # Listeners, by the rule of marked_word: tts-a hits every A, contrasts every A side, and is
    # right on both sides of c01 and c03 only; tts-b misses c01 entirely and gets c02 right.
    tts_a = groups[("tts-a", "context", listeners)]
    assert (tts_a["scored"], tts_a["missing"]) == (3, [])
    assert tts_a["hit"]["value"] == 1.0 and tts_a["pair_contrast"]["value"] == 1.0
    assert tts_a["pair_correct"]["value"] == pytest.approx(2 / 3) and tts_a["hit_both"]["value"] == pytest.approx(5 / 6)
    tts_b = groups[("tts-b", "context", listeners)]
    assert tts_b["scored"] == 2 and tts_b["hit"]["value"] == 0.5 and tts_b["pair_correct"]["value"] == 0.5
    assert tts_b["missing"] == [{"item": "c03", "sides": ["B"]}]  # listed, not scored

    # The detector: the same measures, counted here from the stored detections.
    detections = {
        (d.rendition.system.name, d.rendition.item.external_id, d.rendition.side): set(d.stressed)
        for d in RenditionDetection.objects.filter(detector=detector_run.system).select_related(
            "rendition__item", "rendition__system"
        )
    }
    assert len(detections) == CastRendition.objects.filter(item__cast_set=cast_set).count() == 11
    for system, items in (("tts-a", ("c01", "c02", "c03")), ("tts-b", ("c01", "c02"))):
        pairs = [
            (detections[(system, item, "A")], detections[(system, item, "B")], *CAST_WORDS[item]) for item in items
        ]
        scored = groups[(system, "context", detector)]
        for measure, value in hand_scores(pairs).items():
            assert scored[measure]["value"] == pytest.approx(value), (system, measure)

    # Detector against listeners: Cohen's kappa over every word of the 11 renditions.
    [agreement] = report["detector_vs_listeners"]
    assert (agreement["detector"], agreement["listeners"], agreement["renditions"]) == (detector, listeners, 11)
    detector_words, listener_words = [], []
    for rendition in CastRendition.objects.filter(item__cast_set=cast_set).select_related("item", "system"):
        words = len(rendition.item.words)
        marks = [
            marked_word(n, rendition.system.name, rendition.item.external_id, rendition.side) for n in range(LISTENERS)
        ]
        stressed = detections[(rendition.system.name, rendition.item.external_id, rendition.side)]
        detector_words += [int(k in stressed) for k in range(words)]
        listener_words += [int(marks.count(k) * 2 > LISTENERS) for k in range(words)]
    assert agreement["words"] == len(listener_words)
    # the listeners mark one word of each rendition, so both classes occur and kappa is defined
    assert agreement["kappa"] == pytest.approx(cohen_kappa_score(detector_words, listener_words))


def test_cast_page_lists_the_missing_pair(cast_set, admin_client, django_capture_on_commit_callbacks):
    listen_to_every_rendition(cast_set)
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.get(f"/admin/evaluation/suitereport/cast/{cast_set.pk}/")
    page = admin_client.get(f"/admin/evaluation/suitereport/cast/{cast_set.pk}/").content.decode()
    assert "CAST scores" in page and "Pairs not scored (a side missing)" in page and "c03" in page
    csv_text = admin_client.get(f"/admin/evaluation/suitereport/cast/{cast_set.pk}/scores.csv").content.decode()
    assert "Pair-Correct" in csv_text and "tts-a / context / listeners: cast listeners" in csv_text


def test_one_clip_for_both_sides_gets_the_listeners_labels_on_each(tmp_path, django_capture_on_commit_callbacks):
    """A voice that ignores the context may give one file for both sides: one clip, two renditions."""
    call_command("import_cast_items", str(write_cast_items(tmp_path / "cast.jsonl")), "--set", "cast pilot")
    folder = write_cast_renditions(tmp_path / "flat", system="flat", items=("c01",), sides=("A",), modes=("none",))
    write_jsonl(
        folder / "renditions.jsonl",
        [{"item": "c01", "side": side, "mode": "none", "audio": "wav/c01-A-none.wav"} for side in ("A", "B")],
    )
    call_command("import_system_outputs", str(folder), "--suite", "cast", "--system", "flat", "--set", "cast pilot")
    cast_set = CastSet.objects.get(name="cast pilot")
    assert cast_set.corpus.clips.count() == 1 and CastRendition.objects.count() == 2
    listen_to_every_rendition(cast_set)  # everyone marks word B (side A's rule for this voice: see marked_word)
    with django_capture_on_commit_callbacks(execute=True):
        job = suite_report_request(suite="cast", cast_set=cast_set, resamples=10)
    job.refresh_from_db()
    [group] = json.loads(job.result_json)["groups"]
    assert group["scored"] == 1 and [row["item"] for row in group["missing"]] == ["c02", "c03"]  # never rendered
    assert group["hit"]["value"] == 0.0 and group["hit_both"]["value"] == 0.5  # B heard on both sides
