"""import_emphasis_dataset on the files the publishers distribute: the hub's Parquet files with the
audio inside, a save_to_disk folder, EmphAssess's gold_df.json with rows that cannot be imported;
and --skip-invalid, which imports the rest and lists each record left out with its reason. The
files are written here in the published layouts (tests/evaluation/dataset_layouts.py)."""

import io
import json

import pyarrow
import pyarrow.parquet
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Clip, Corpus
from evaluation.models import LabelSet
from evaluation.selectors.label_sets import label_set_rows
from tests.evaluation.dataset_layouts import (
    audio_bytes,
    emphassess_with_punctuation_marks,
    stresstest_parquet,
    tinystress_parquet,
    tinystress_saved,
)

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command("import_emphasis_dataset", *map(str, args), stdout=out)
    return out.getvalue()


def rows_of(name: str) -> dict[str, dict]:
    label_set = LabelSet.objects.get(name=name)
    return {row["clip_id"]: row for row in label_set_rows(label_set_id=label_set.pk)}


def test_tinystress_parquet_with_its_audio_inside_imports_without_an_audio_folder(tmp_path):
    folder = tinystress_parquet(tmp_path / "TinyStress-15K")

    out = run("tinystress", folder, "--name", "TinyStress")

    label_set = LabelSet.objects.get(name="TinyStress")
    assert label_set.summary["counts"] == {"en": {"train": 3, "test": 2}}
    assert label_set.source["files"] == ["data/test-00000-of-00001.parquet", "data/train-00000-of-00001.parquet"]
    assert label_set.source["audio_folder"] == "embedded in the files" and label_set.source["skipped"] == []
    rows = rows_of("TinyStress")
    assert sorted(rows) == ["0", "1", "2", "3", "4"]
    assert [w["text"] for w in rows["1"]["words"]] == ["we", "walked", "home", "slowly"]  # emphasis_indices [1]
    assert [w["binary"] for w in rows["1"]["words"]] == [False, True, False, False]
    assert rows["3"]["split"] == "test"
    clip = Clip.objects.get(external_id="1")
    assert clip.source_path == "tinystress_00001.flac"  # the name the embedded file had
    assert clip.duration == pytest.approx(1.2, abs=0.05)  # the FLAC bytes were decoded
    assert "Skipped" not in out


def test_a_save_to_disk_folder_imports_with_its_split_folders(tmp_path):
    folder = tinystress_saved(tmp_path / "saved", {"train": 2, "test": 1})
    assert (folder / "dataset_dict.json").is_file() and (folder / "train" / "state.json").is_file()

    run("tinystress", folder, "--name", "Saved")

    label_set = LabelSet.objects.get(name="Saved")
    assert label_set.summary["counts"] == {"en": {"train": 2, "test": 1}}
    assert label_set.source["files"] == ["test/data-00000-of-00001.arrow", "train/data-00000-of-00001.arrow"]
    assert rows_of("Saved")["2"]["split"] == "test"
    assert Clip.objects.get(external_id="0").duration == pytest.approx(1.2, abs=0.05)


def test_one_saved_split_names_no_split_unless_asked(tmp_path):
    folder = tinystress_saved(tmp_path / "saved", {"train": 2})
    single = folder / "train"  # a Dataset saved alone: state.json's _split is null

    state = json.loads((single / "state.json").read_text())
    state["_split"] = None
    (single / "state.json").write_text(json.dumps(state))
    renamed = single.rename(tmp_path / "alone")

    with pytest.raises(CommandError, match="the layout names no split for this record"):
        run("tinystress", renamed, "--name", "Alone", "--skip-invalid")  # a choice, not a record to skip
    run("tinystress", renamed, "--name", "Alone", "--splits", "train")
    assert LabelSet.objects.get(name="Alone").summary["counts"] == {"en": {"train": 2}}


def test_stresstest_parquet_rows_without_id_or_file_name_are_named_by_file_and_row(tmp_path):
    folder = stresstest_parquet(tmp_path / "StressTest")

    run("stresstest", folder, "--name", "StressTest")

    rows = rows_of("StressTest")
    assert sorted(rows) == [f"data-test-00000-of-00001-{n}" for n in range(3)]
    assert [w["binary"] for w in rows["data-test-00000-of-00001-1"]["words"]] == [False, False, True, False]
    assert {row["split"] for row in rows.values()} == {"test"}
    assert {row["speaker"] for row in rows.values()} == {"actor"}  # metadata.voice_name


def test_stresstest_rows_with_file_names_are_named_by_them(tmp_path):
    folder = stresstest_parquet(tmp_path / "StressTest", paths=True)
    run("stresstest", folder, "--name", "StressTest")
    assert sorted(rows_of("StressTest")) == ["stresstest_0", "stresstest_1", "stresstest_2"]


def test_emphassess_rows_marking_punctuation_refuse_the_file_unless_skipped(tmp_path, media_storage):
    gold, audio = emphassess_with_punctuation_marks(tmp_path)

    with pytest.raises(CommandError) as refused:
        run("emphassess", gold, "--audio", audio, "--name", "EmphAssess", "--splits", "test")
    assert "gold_df.json line 2 (clip 'emph_001'), gold_emphasis: indices [3] mark punctuation" in str(refused.value)
    assert not Corpus.objects.exists() and not LabelSet.objects.exists()
    assert not any(path.is_file() for path in media_storage.rglob("*"))

    out = run("emphassess", gold, "--audio", audio, "--name", "EmphAssess", "--splits", "test", "--skip-invalid")

    assert sorted(rows_of("EmphAssess")) == ["emph_000", "emph_002", "emph_004"]
    assert "Skipped 2 record(s), not imported:" in out
    assert "  gold_df.json line 2 (clip 'emph_001'), gold_emphasis: indices [3] mark punctuation, not a word" in out
    assert "  gold_df.json line 4 (clip 'emph_003'), gold_emphasis: indices [6] are outside the 6 tokens" in out
    assert LabelSet.objects.get(name="EmphAssess").source["skipped"] == [
        {
            "where": "gold_df.json line 2",
            "clip_id": "emph_001",
            "field": "gold_emphasis",
            "reason": "indices [3] mark punctuation, not a word",
        },
        {
            "where": "gold_df.json line 4",
            "clip_id": "emph_003",
            "field": "gold_emphasis",
            "reason": "indices [6] are outside the 6 tokens",
        },
    ]


def _rewrite_parquet(path, change) -> None:
    table = pyarrow.parquet.read_table(path)
    rows = table.to_pylist()
    change(rows)
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows, schema=table.schema), path)


def test_skipped_table_rows_are_named_by_file_row_and_field_and_undecodable_audio_too(tmp_path):
    folder = tinystress_parquet(tmp_path / "TinyStress-15K", {"train": 4})
    shard = folder / "data" / "train-00000-of-00001.parquet"

    def spoil(rows):
        rows[1]["emphasis_indices"] = [9]  # "we walked home slowly": 4 words
        rows[2]["audio"] = {"bytes": b"RIFF but not a sound", "path": "tinystress_00002.wav"}

    _rewrite_parquet(shard, spoil)

    with pytest.raises(CommandError) as refused:
        run("tinystress", folder, "--name", "TS")
    assert "data/train-00000-of-00001.parquet row 1 (clip '1'), emphasis_indices: indices [9]" in str(refused.value)
    assert not Clip.objects.exists()

    out = run("tinystress", folder, "--name", "TS", "--skip-invalid")

    assert sorted(rows_of("TS")) == ["0", "3"]
    skipped = LabelSet.objects.get(name="TS").source["skipped"]
    assert [(p["where"], p["clip_id"], p["field"]) for p in skipped] == [
        ("data/train-00000-of-00001.parquet row 1", "1", "emphasis_indices"),
        ("data/train-00000-of-00001.parquet row 2", "2", "audio"),  # the corpus import could not decode it
    ]
    assert "data/train-00000-of-00001.parquet row 2 (clip '2'), audio:" in out
    assert Clip.objects.count() == 2


def test_a_file_that_is_no_table_refuses_the_import_even_when_skipping(tmp_path):
    folder = tinystress_parquet(tmp_path / "TinyStress-15K", {"train": 2})
    (folder / "data" / "test-00000-of-00001.parquet").write_bytes(b"PAR1 this is not Parquet")

    with pytest.raises(CommandError, match=r"data/test-00000-of-00001.parquet: cannot be read as a parquet table"):
        run("tinystress", folder, "--name", "TS", "--skip-invalid")
    assert not Clip.objects.exists() and not LabelSet.objects.exists()


def test_rows_that_neither_embed_nor_find_their_audio_are_named(tmp_path):
    folder = tinystress_parquet(tmp_path / "TinyStress-15K", {"train": 2})
    shard = folder / "data" / "train-00000-of-00001.parquet"

    def only_paths(rows):
        rows[0]["audio"] = {"bytes": None, "path": "tinystress_00000.flac"}

    _rewrite_parquet(shard, only_paths)
    with pytest.raises(CommandError, match=r"row 0 \(clip '0'\), audio: embeds no audio bytes"):
        run("tinystress", folder, "--name", "TS")

    audio = tmp_path / "audio"
    audio.mkdir()
    (audio / "tinystress_00000.flac").write_bytes(audio_bytes(".flac", 1.0, 7))
    run("tinystress", folder, "--audio", audio, "--name", "TS")  # the path is looked up in --audio
    assert Clip.objects.get(external_id="0").duration == pytest.approx(1.0, abs=0.05)
