"""Dataset exports: each format built by the worker from a final set and read back; refusals;
the same set gives the same zip; an existing export is handed out again."""

import csv
import hashlib
import io
import json
import zipfile

import pytest
from django.core.files.storage import default_storage

from annotation.models import Participant
from annotation.participant_names import opaque_annotator_id
from evaluation.models import DatasetExport
from evaluation.reports.label_set_files import CLIP_COLUMNS, WORD_COLUMNS
from evaluation.selectors.label_sets import label_set_rows
from evaluation.services.dataset_exports import ExportRefused, dataset_export_request
from evaluation.services.label_sets import label_set_create, label_set_default_parameters
from tests.evaluation.builders import golden_study
from tests.evaluation.export_builders import exported, final_label_set, zip_entries

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return golden_study()


@pytest.fixture
def label_set(study, django_capture_on_commit_callbacks):
    return final_label_set(study, django_capture_on_commit_callbacks)


def jsonl(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode().splitlines()]


def csv_rows(data: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(data.decode())))


def test_jsonl_holds_the_set_rows_and_one_row_per_word(label_set, django_capture_on_commit_callbacks):
    export = exported(django_capture_on_commit_callbacks, format="jsonl", label_set=label_set)
    entries = zip_entries(export)
    rows = list(label_set_rows(label_set_id=label_set.pk))

    assert sorted(entries) == ["README.md", "clips.jsonl", "words.jsonl"]
    assert jsonl(entries["clips.jsonl"]) == rows
    assert hashlib.sha256(entries["clips.jsonl"]).hexdigest() == label_set.checksum
    words = jsonl(entries["words.jsonl"])
    assert len(words) == label_set.summary["words"] == sum(len(row["words"]) for row in rows)
    expected = [
        (row["clip_id"], w["index"], w["text"], int(w["binary"]), w["scalar"], len(row["annotators"]))
        for row in rows
        for w in row["words"]
    ]
    assert [(w["clip_id"], w["word_index"], w["word"], w["binary"], w["scalar"], w["annotators"]) for w in words] == (
        expected
    )
    assert export.file_name == "golden-labels-v1-jsonl.zip"
    assert export.file.name.startswith("exports/") and export.file.name.endswith("/golden-labels-v1-jsonl.zip")
    assert export.size == len(default_storage.open(export.file.name).read())
    assert export.sha256 == hashlib.sha256(default_storage.open(export.file.name).read()).hexdigest()
    assert (export.phase, export.done, export.total) == ("finished", export.total, export.total)


def test_csv_holds_the_same_labels(label_set, django_capture_on_commit_callbacks):
    entries = zip_entries(exported(django_capture_on_commit_callbacks, format="csv", label_set=label_set))
    rows = list(label_set_rows(label_set_id=label_set.pk))

    words, clips = csv_rows(entries["words.csv"]), csv_rows(entries["clips.csv"])
    assert tuple(words[0]) == WORD_COLUMNS and tuple(clips[0]) == CLIP_COLUMNS
    assert [(w["clip_id"], int(w["word_index"]), int(w["binary"]), float(w["scalar"])) for w in words] == [
        (row["clip_id"], w["index"], int(w["binary"]), w["scalar"]) for row in rows for w in row["words"]
    ]
    assert [(c["clip_id"], c["split"], json.loads(c["binary"])) for c in clips] == [
        (row["clip_id"], row["split"], [int(w["binary"]) for w in row["words"]]) for row in rows
    ]
    assert {w["start"] for w in words} == {""}  # the golden study has no word times: empty cells


def test_the_data_card_says_what_the_set_is(study, django_capture_on_commit_callbacks):
    # A subsample of 6 a clip, so that the card has clips to list as left out.
    label_set = final_label_set(study, django_capture_on_commit_callbacks, subsample=6)
    card = zip_entries(exported(django_capture_on_commit_callbacks, format="jsonl", label_set=label_set))["README.md"]
    card = card.decode()

    assert card.startswith("# golden labels v1: JSONL")
    for text in (
        label_set.checksum,
        label_set.code_version,
        "golden (golden)",
        "split seed**: 0",
        "## Clips per language and split",
        "## Agreement of the annotations in this set",
        "golden, all languages: 10 clips",
        "Fleiss' kappa",
        "## Left out",
        "golden: 2 clip(s) with fewer annotations than the subsample: clip-03 (2), clip-10 (2)",
        "`clips.jsonl`",
        "`words.jsonl`",
    ):
        assert text in card, text
    for language, splits in label_set.summary["counts"].items():
        assert f"| {language} |" in card and f"| {sum(splits.values())} |" in card


def test_the_same_set_gives_the_same_zip_twice(label_set, django_capture_on_commit_callbacks):
    first = exported(django_capture_on_commit_callbacks, format="csv", label_set=label_set)
    first_bytes = first.file.open("rb").read()
    default_storage.delete(first.file.name)  # so that the second request builds it again

    second = exported(django_capture_on_commit_callbacks, format="csv", label_set=label_set)

    assert second.pk != first.pk and second.file.name != first.file.name
    assert second.file.open("rb").read() == first_bytes and second.sha256 == first.sha256
    with zipfile.ZipFile(io.BytesIO(first_bytes)) as archive:
        infos = archive.infolist()
    assert [info.filename for info in infos] == sorted(info.filename for info in infos)
    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}


def test_an_export_that_exists_is_handed_out_again(label_set, django_capture_on_commit_callbacks):
    first = exported(django_capture_on_commit_callbacks, format="jsonl", label_set=label_set)

    assert dataset_export_request(format="jsonl", label_set=label_set).pk == first.pk
    other_format = exported(django_capture_on_commit_callbacks, format="csv", label_set=label_set)
    assert other_format.pk != first.pk
    assert DatasetExport.objects.count() == 2


def test_refusals_name_the_problem(study, label_set):
    draft = label_set_create(name="draft", studies=[study], parameters=label_set_default_parameters(studies=[study]))
    cases = [
        ({"format": "jsonl", "label_set": draft}, "draft: only a final"),
        ({"format": "raw"}, "a raw export is of one study's annotations"),
        ({"format": "raw", "study": study, "label_set": label_set}, "give a study and no label set"),
        ({"format": "csv", "study": study}, "a csv export is of a label set"),
        ({"format": "xlsx", "label_set": label_set}, "unknown export format 'xlsx'"),
        ({"format": "jsonl", "label_set": label_set, "include_prolific_ids": True}, "only in raw exports"),
    ]
    for request, message in cases:
        with pytest.raises(ExportRefused, match=message):
            dataset_export_request(**request)
    assert not DatasetExport.objects.exists()


def test_a_set_whose_rows_changed_after_finalizing_is_not_exported(label_set, django_capture_on_commit_callbacks):
    clip = label_set.clips.first()
    clip.words[0]["binary"] = not clip.words[0]["binary"]
    clip.save()

    export = exported(django_capture_on_commit_callbacks, format="jsonl", label_set=label_set)

    assert export.status == DatasetExport.Status.FAILED
    assert "do not match the checksum recorded when it was finalized" in export.error
    assert not export.file


def test_textgrids_of_a_set_without_word_times_fail_with_the_reason(label_set, django_capture_on_commit_callbacks):
    export = exported(django_capture_on_commit_callbacks, format="textgrid", label_set=label_set)

    assert export.status == DatasetExport.Status.FAILED
    assert export.error == "no clip of golden labels v1 has word times: there is nothing to write as TextGrids"


# --- raw annotations of a study -------------------------------------------------


def test_raw_export_has_one_row_per_annotator_clip_and_word_with_opaque_ids(study, django_capture_on_commit_callbacks):
    rejected = study.participants.order_by("pk").first()
    Participant.objects.filter(pk=rejected.pk).update(decision=Participant.Decision.REJECTED)

    export = exported(django_capture_on_commit_callbacks, format="raw", study=study)
    entries = zip_entries(export)
    rows = csv_rows(entries["annotations.csv"])

    assert sorted(entries) == ["README.md", "annotations.csv", "participants.csv"]
    assert export.file_name == "golden-raw.zip"
    levels = [
        level for annotation in study.participants.all() for a in annotation.annotations.all() for level in a.levels
    ]
    assert len(rows) == len(levels)
    pids = set(study.participants.values_list("prolific_pid", flat=True))
    assert {row["annotator"] for row in rows} == {opaque_annotator_id("golden", pid) for pid in pids}
    assert not any(pid in entries["annotations.csv"].decode() for pid in pids)
    assert {
        row["decision"] for row in rows if row["annotator"] == opaque_annotator_id("golden", rejected.prolific_pid)
    } == {"rejected"}
    checks = [row for row in rows if row["attention_check"] == "1"]
    assert checks and {row["attention_passed"] for row in checks} == {"0", "1"}
    assert "opaque ids" in entries["README.md"].decode()


def test_raw_export_shows_prolific_ids_only_when_asked(study, django_capture_on_commit_callbacks):
    export = exported(django_capture_on_commit_callbacks, format="raw", study=study, include_prolific_ids=True)
    rows = csv_rows(zip_entries(export)["annotations.csv"])

    people = study.participants.values_list("pk", "prolific_pid")
    assert {(row["annotator"], row["participant"]) for row in rows} == {
        (opaque_annotator_id("golden", pid), pid) for pk, pid in people
    }  # the same opaque id as everywhere, the Prolific id beside it
    assert export.file_name == "golden-raw-prolific-ids.zip"
    # a raw export is never handed out again: the study's annotations may have changed
    assert exported(django_capture_on_commit_callbacks, format="raw", study=study).pk != export.pk


def test_raw_export_of_a_listening_form_has_one_row_per_answer(django_capture_on_commit_callbacks):
    from tests.annotation.study_helpers import live_form
    from tests.evaluation.test_listening_form_report_page import answer_every_type, every_type, take_form

    form = live_form(specs=every_type, target_annotations=3)
    participant = take_form(form, answer_every_type)

    export = exported(django_capture_on_commit_callbacks, format="raw", study=form)
    rows = csv_rows(zip_entries(export)["annotations.csv"])

    assert len(rows) == 5 and {row["annotator"] for row in rows} == {
        opaque_annotator_id(form.slug, f"local-{participant.pk}")  # no Prolific id: as reports name them
    }
    by_item = {row["item_id"]: row for row in rows}
    assert json.loads(by_item["choice"]["answer"]) == {"choice": 1}
    assert by_item["pair"]["second_clip_id"] and by_item["pair"]["item_type"] == "pairwise"
    assert json.loads(by_item["ssd"]["levels"]) == [0, 0, 0, 1, 1, 0, 0]
    assert {row["attention_check"] for row in rows} == {"0"} and {row["completed"] for row in rows} == {"1"}


def test_the_data_card_lists_the_emotions_without_an_arousal(study, django_capture_on_commit_callbacks):
    from annotation.models import Clip

    Clip.objects.filter(corpus=study.corpus, external_id__in=["clip-00", "clip-01"]).update(emotion="Neutral")
    label_set = final_label_set(study, django_capture_on_commit_callbacks)

    card = zip_entries(exported(django_capture_on_commit_callbacks, format="jsonl", label_set=label_set))["README.md"]

    assert "- **emotions without an arousal (their `arousal` is empty)**: neutral (2 clips)" in card.decode()


def test_word_rows_carry_what_training_needs_without_a_join(label_set, django_capture_on_commit_callbacks):
    # Issue 21, item 4: study, arousal, split, scale step and each opaque annotator's level on every word.
    rows = {row["clip_id"]: row for row in label_set_rows(label_set_id=label_set.pk)}
    jsonl_export = exported(django_capture_on_commit_callbacks, format="jsonl", label_set=label_set)
    csv_export = exported(django_capture_on_commit_callbacks, format="csv", label_set=label_set)
    jsonl_words = jsonl(zip_entries(jsonl_export)["words.jsonl"])
    csv_words = csv_rows(zip_entries(csv_export)["words.csv"])

    assert len(jsonl_words) == len(csv_words) == label_set.summary["words"]
    for word, cells in zip(jsonl_words, csv_words, strict=True):
        clip = rows[word["clip_id"]]
        levels = dict(zip(clip["annotators"], clip["words"][word["word_index"]]["levels"], strict=True))
        expected = (clip["study"], clip["arousal"], clip["split"], clip["scale_step"])
        assert (word["study"], word["arousal"], word["split"], word["scale_step"]) == expected
        assert word["levels"] == levels and set(levels) == set(clip["annotators"])
        assert json.loads(cells["levels"]) == levels and cells["arousal"] == clip["arousal"]
