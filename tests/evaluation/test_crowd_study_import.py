"""Morrison et al.'s crowdsourced LibriTTS annotations (annotations.json of the emphases project,
written here) as a closed binary study: the annotator filters, the agreement report and the
label set run on it."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotation, Clip, Corpus, Participant, Study
from annotation.services.studies import study_status_refusal
from annotation.shared.jobs import JobFailed
from evaluation.models import LabelSet
from evaluation.reports.agreement import ReportParameters
from evaluation.selectors.label_sets import label_set_rows
from evaluation.services.agreement_reports import agreement_report_compute
from evaluation.services.label_sets import LabelSetRefused, label_set_create, label_set_default_parameters
from tests.annotation.factories import StudyFactory
from tests.evaluation.dataset_layouts import morrison_annotations

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command("import_emphasis_dataset", *map(str, args), stdout=out)
    return out.getvalue()


def test_the_crowd_becomes_a_closed_binary_study_with_its_filters_applied(tmp_path):
    path, audio = morrison_annotations(tmp_path)

    out = run("morrison", path, "--audio", audio, "--name", "Morrison LibriTTS")

    study = Study.objects.get(name="Morrison LibriTTS")
    assert (study.kind, study.scale, study.status, study.language) == ("emphasis", "binary", "closed", "en")
    assert study.selection["imported"]["file"] == "annotations.json"
    assert study.items.count() == 20 and Clip.objects.filter(corpus__name="Morrison LibriTTS").count() == 20
    clip = Clip.objects.get(external_id="40_121026_000000_000000")
    assert (clip.speaker.name, clip.source_path) == ("40", "40/121026/40_121026_000000_000000.wav")
    assert [(w.text, w.start, w.end) for w in clip.words.all()] == [
        ("he", 0.1, 0.3),
        ("never", 0.35, 0.55),
        ("came", 0.6, 0.8),
        ("back", 0.85, 1.05),
    ]
    decisions = dict(study.participants.values_list("prolific_pid", "decision"))
    assert decisions == {
        "MORRISON-000000": "pending",
        "MORRISON-000001": "pending",
        "MORRISON-000002": "pending",
        "MORRISON-000003": "rejected",  # marked every word of every item
        "MORRISON-000004": "rejected",  # five items
    }
    eager = Participant.objects.get(prolific_pid="MORRISON-000003")
    assert "20 of 20 items with more than two thirds of the words marked" in eager.decision_note
    assert eager.screening_answers == {"language": "English", "country": "United States"}
    assert "fewer than 20 items (5)" in Participant.objects.get(prolific_pid="MORRISON-000004").decision_note
    assert Annotation.objects.filter(participant__study=study).count() == 3 * 20 + 20 + 5
    eager_levels = Annotation.objects.filter(participant=eager).values_list("levels", flat=True)
    assert {tuple(levels) for levels in eager_levels} == {(1, 1, 1, 1)}
    assert "5 annotator(s)" in out and "2 annotator(s) left out by the filters" in out
    assert "a binary study holds imported annotations" in study_status_refusal(study=study, status="live")


def test_the_agreement_report_runs_on_the_kept_annotators(tmp_path):
    path, audio = morrison_annotations(tmp_path)
    run("morrison", path, "--audio", audio, "--name", "Morrison LibriTTS")
    study = Study.objects.get()

    report = json.loads(agreement_report_compute(study=study, parameters=ReportParameters(subsample=None, resamples=0)))

    pooled = report["agreement"]["pooled"]
    assert (pooled["clips"], pooled["words"], pooled["annotators"]) == (20, 80, 3)
    # Annotators 1 and 2 agree on every word; annotator 0 also marks word 0: 3 of 4 words agree.
    assert 0 < pooled["fleiss"]["value"] < 1
    assert report["data"]["left_out_by_source"] == {"annotations of rejected participants": 25}


def test_the_label_set_is_binary_only_with_the_crowds_provenance(tmp_path):
    path, audio = morrison_annotations(tmp_path)

    out = run("morrison", path, "--audio", audio, "--name", "Morrison LibriTTS", "--label-set", "Morrison")

    label_set = LabelSet.objects.get(name="Morrison")
    assert (label_set.lifecycle, label_set.label_source, label_set.label_kind) == ("final", "human_crowd", "binary")
    assert label_set.source["dataset"].startswith("Morrison et al. 2024")
    assert "Human crowd" in out
    rows = list(label_set_rows(label_set_id=label_set.pk))
    assert len(rows) == 20 and all(len(row["annotators"]) == 3 for row in rows)
    words = rows[0]["words"]
    assert [w["binary"] for w in words] == [False, True, False, False]  # word 0: one of three
    assert [w["levels"] for w in words] == [[1, 0, 0], [1, 1, 1], [0, 0, 0], [0, 0, 0]]
    assert {w["scalar"] for w in words} == {None}
    left_out = label_set.summary["left_out"]["morrison-libritts"]
    assert left_out["annotations_left_out_by_source"] == {"annotations of rejected participants": 25}


def test_a_label_set_that_cannot_be_built_leaves_nothing_of_the_import(tmp_path, media_storage, monkeypatch):
    def fail(label_set, progress):
        raise JobFailed("forced: the annotator model could not be fitted")

    monkeypatch.setattr("evaluation.services.label_sets._build", fail)
    path, audio = morrison_annotations(tmp_path)

    with pytest.raises(CommandError, match="could not be built: forced"):
        run("morrison", path, "--audio", audio, "--name", "Morrison LibriTTS", "--label-set", "Morrison")

    assert not Corpus.objects.exists() and not Clip.objects.exists() and not Study.objects.exists()
    assert not Participant.objects.exists() and not Annotation.objects.exists() and not LabelSet.objects.exists()
    assert not any(path.is_file() for path in media_storage.rglob("*"))


def test_without_the_filters_everyone_stays(tmp_path):
    path, audio = morrison_annotations(tmp_path)
    run("morrison", path, "--audio", audio, "--name", "all", "--keep-all-annotators")
    assert not Participant.objects.filter(decision="rejected").exists()


def test_bad_annotations_are_named_by_annotator_item_and_field(tmp_path, media_storage):
    path, audio = morrison_annotations(tmp_path, stems=20)
    data = json.loads(path.read_text())
    data["000001"]["annotations"][2]["score"] = [1, 0, 2, 0]
    data["000002"]["annotations"][4]["score"] = [1, 0]
    data["000002"]["annotations"][5]["words"][1][0] = "ever"
    path.write_text(json.dumps(data))
    (audio / "41" / "121026" / "41_121026_000019_000000.wav").unlink()

    with pytest.raises(CommandError) as refused:
        run("morrison", path, "--audio", audio, "--name", "bad")

    message = str(refused.value)
    assert "annotations.json: 7 bad row(s), nothing was imported" in message
    assert (
        "annotations.json annotator '000001' item 3 (clip '40_121026_000002_000000'), score: "
        "each score must be 0 or 1 (this is a binary study)"
    ) in message
    assert (
        "annotator '000002' item 5 (clip '40_121026_000004_000000'), score: must give one score per word (4)" in message
    )
    assert "annotator '000002' item 6 (clip '41_121026_000005_000000'), words: differ from the words given" in message
    assert "annotator '000000' item 20 (clip '41_121026_000019_000000'), audio: no audio file" in message
    # every later item naming that stem is named too: with --skip-invalid each is one left out
    assert (
        "annotator '000003' item 20 (clip '41_121026_000019_000000'), stem: has no audio file "
        "(see annotations.json annotator '000000' item 20)"
    ) in message
    assert not Study.objects.exists() and not Clip.objects.exists()
    assert not any(path.is_file() for path in media_storage.rglob("*"))


def test_skip_invalid_leaves_out_the_bad_items_and_lists_each(tmp_path, media_storage):
    path, audio = morrison_annotations(tmp_path, stems=20)
    data = json.loads(path.read_text())
    data["000001"]["annotations"][2]["score"] = [1, 0, 2, 0]
    path.write_text(json.dumps(data))
    (audio / "41" / "121026" / "41_121026_000019_000000.wav").unlink()

    out = run("morrison", path, "--audio", audio, "--name", "kept", "--skip-invalid")

    study = Study.objects.get(name="kept")
    assert study.items.count() == 19  # the stem without audio is left out
    assert "Skipped 5 record(s), not imported:" in out
    assert "  annotations.json annotator '000001' item 3 (clip '40_121026_000002_000000'), score: each score" in out
    assert "annotator '000003' item 20 (clip '41_121026_000019_000000'), stem: has no audio file" in out
    # 3 good annotators of 20 items, one with an item left out, and the eager one with 19
    annotations = Annotation.objects.filter(participant__study=study)
    assert annotations.count() == 19 + 18 + 19 + 19 + 5
    # the filters count the items the release gives: 000001 gave 20, so an item skipped here
    # does not make their batch "fewer than 20 items"; the eager one and the short one are out
    rejected = Participant.objects.filter(study=study, decision="rejected").values_list("prolific_pid", flat=True)
    assert sorted(rejected) == ["MORRISON-000003", "MORRISON-000004"]


def test_binary_and_three_level_studies_make_no_set_together(tmp_path):
    path, audio = morrison_annotations(tmp_path)
    run("morrison", path, "--audio", audio, "--name", "Morrison LibriTTS")
    crowd = Study.objects.get()
    three_level = StudyFactory(corpus=crowd.corpus)

    with pytest.raises(LabelSetRefused, match="binary and three-level studies do not mix"):
        label_set_create(
            name="mixed",
            studies=[crowd, three_level],
            parameters=label_set_default_parameters(studies=[crowd]),
            enqueue=False,
        )
    assert not LabelSet.objects.exists()
