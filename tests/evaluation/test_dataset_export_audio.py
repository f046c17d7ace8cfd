"""The exports that need audio and word times: a Hugging Face audiofolder that `datasets` loads,
and Praat TextGrids that praatio reads back, from a small imported corpus."""

import pytest
from django.core.files.storage import default_storage

from annotation.models import Clip
from evaluation.models import DatasetExport
from evaluation.reports.label_set_files import safe_file_stem
from evaluation.selectors.label_sets import label_set_rows
from tests.evaluation.export_builders import (
    UNTIMED,
    assert_decodes_to,
    audio_study,
    exported,
    final_label_set,
    load_audiofolder,
    unzipped,
    zip_entries,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def label_set(corpus_folder, django_capture_on_commit_callbacks):
    study = audio_study(corpus_folder)
    return final_label_set(study, django_capture_on_commit_callbacks, name="voices")


def test_the_audiofolder_loads_with_datasets_and_holds_the_set(
    label_set, django_capture_on_commit_callbacks, tmp_path, monkeypatch
):
    export = exported(django_capture_on_commit_callbacks, format="audiofolder", label_set=label_set)
    splits = load_audiofolder(unzipped(export, tmp_path / "export"), tmp_path, monkeypatch)
    rows = {row["clip_id"]: row for row in label_set_rows(label_set_id=label_set.pk)}
    stored = {clip.external_id: clip.model_audio.name for clip in Clip.objects.filter(external_id__in=rows)}

    seen = []
    for split, dataset in splits.items():
        for item in dataset:
            row = rows[item["clip_id"]]
            seen.append(item["clip_id"])
            assert row["split"] == split
            assert item["words"] == [w["text"] for w in row["words"]]
            assert item["binary"] == [int(w["binary"]) for w in row["words"]]
            assert item["scalar"] == [w["scalar"] for w in row["words"]]
            assert item["annotators"] == len(row["annotators"]) == 3
            assert item["scale_step"] == (row["scale_step"] or 0)
            assert "start" not in item  # one clip has no word times (see audiofolder_metadata)
            assert_decodes_to(item["audio"], stored[item["clip_id"]])  # the samples, decoded by torchcodec
    assert sorted(seen) == sorted(rows)
    names = zip_entries(export)
    assert f"{rows['odd id/4']['split']}/{safe_file_stem('odd id/4')}.wav" in names
    assert "odd_id_4-" in safe_file_stem("odd id/4")
    card = names["README.md"].decode()
    assert "the word times (`start`, `end`) in metadata.jsonl: some clips have none" in card


def test_word_times_go_into_the_audiofolder_when_every_clip_has_them(
    label_set, django_capture_on_commit_callbacks, tmp_path, monkeypatch
):
    from annotation.models import StudyItem

    study = label_set.studies.get()
    StudyItem.objects.filter(study=study, clip__external_id=UNTIMED).update(review=StudyItem.Review.EXCLUDED)
    timed_set = final_label_set(study, django_capture_on_commit_callbacks, name="voices")
    export = exported(django_capture_on_commit_callbacks, format="audiofolder", label_set=timed_set)
    splits = load_audiofolder(unzipped(export, tmp_path / "export"), tmp_path, monkeypatch)
    rows = {row["clip_id"]: row for row in label_set_rows(label_set_id=timed_set.pk)}

    items = [item for dataset in splits.values() for item in dataset]
    assert len(items) == len(rows) == 7
    for item in items:
        assert item["start"] == [w["start"] for w in rows[item["clip_id"]]["words"]]
        assert item["end"] == [w["end"] for w in rows[item["clip_id"]]["words"]]


def test_textgrids_have_the_words_and_labels_and_list_clips_without_times(
    label_set, django_capture_on_commit_callbacks, tmp_path
):
    from praatio import textgrid

    export = exported(django_capture_on_commit_callbacks, format="textgrid", label_set=label_set)
    folder = unzipped(export, tmp_path / "export")
    rows = list(label_set_rows(label_set_id=label_set.pk))

    grids = sorted(path.name for path in (folder / "textgrids").iterdir())
    assert grids == sorted(f"{safe_file_stem(row['clip_id'])}.TextGrid" for row in rows if row["clip_id"] != UNTIMED)
    for row in rows:
        if row["clip_id"] == UNTIMED:
            continue
        grid = textgrid.openTextgrid(str(folder / "textgrids" / f"{safe_file_stem(row['clip_id'])}.TextGrid"), False)
        assert list(grid.tierNames) == ["words", "binary", "scalar"]
        words = grid.getTier("words").entries
        assert [(e.start, e.end, e.label) for e in words] == [(w["start"], w["end"], w["text"]) for w in row["words"]]
        assert [e.label for e in grid.getTier("binary").entries] == [str(int(w["binary"])) for w in row["words"]]
        assert [float(e.label) for e in grid.getTier("scalar").entries] == pytest.approx(
            [w["scalar"] for w in row["words"]], abs=5e-5
        )
    card = (folder / "README.md").read_text()
    assert f"- {UNTIMED}: no word times" in card
    assert "TextGrids**: 7 of 8 clips" in card


def test_missing_audio_fails_the_export_with_the_clip_named(label_set, django_capture_on_commit_callbacks):
    clip = Clip.objects.get(external_id="clip-05")
    default_storage.delete(clip.model_audio.name)

    export = exported(django_capture_on_commit_callbacks, format="audiofolder", label_set=label_set)

    assert export.status == DatasetExport.Status.FAILED
    assert "the 16 kHz audio of clip 'clip-05' is missing from storage" in export.error
