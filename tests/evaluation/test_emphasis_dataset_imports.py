"""import_emphasis_dataset for the per-clip-label datasets: EmphAssess, TinyStress-15K, StressTest
(files written here in their published layouts, audio made here), through the command."""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Clip, Corpus
from evaluation.models import LabelSet
from evaluation.selectors.label_sets import label_set_rows
from evaluation.services.label_sets import label_set_checksum
from tests.evaluation.dataset_layouts import emphassess_folder, stresstest_file, tinystress_folder
from tests.evaluation.export_builders import exported, zip_entries

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command("import_emphasis_dataset", *map(str, args), stdout=out)
    return out.getvalue()


def test_emphassess_becomes_a_corpus_and_a_final_prescribed_binary_set(tmp_path):
    gold, audio = emphassess_folder(tmp_path)

    out = run("emphassess", gold, "--audio", audio, "--name", "EmphAssess test", "--splits", "test")

    label_set = LabelSet.objects.get(name="EmphAssess test")
    assert (label_set.lifecycle, label_set.label_source, label_set.label_kind) == ("final", "prescribed", "binary")
    assert label_set.source["dataset"] == "EmphAssess" and label_set.source["files"] == ["gold_df.json"]
    assert label_set.checksum == label_set_checksum(label_set_id=label_set.pk)
    assert "EmphAssess: Prescribed by the script" in out and "en: test 4" in out
    rows = {row["clip_id"]: row for row in label_set_rows(label_set_id=label_set.pk)}
    assert set(rows) == {f"emph_{n:03d}" for n in range(4)}
    first = rows["emph_000"]
    # "I never said she stole my money ." : the full stop joins "money"; the first word is marked
    assert [w["text"] for w in first["words"]] == ["I", "never", "said", "she", "stole", "my", "money."]
    assert [w["binary"] for w in first["words"]] == [True] + [False] * 6
    assert {w["scalar"] for w in first["words"]} == {None} and first["annotators"] == [] and first["study"] == ""
    second = rows["emph_001"]  # gold_emphasis 1 of ["we", "walked", "home", ",", "slowly", "!"] -> "walked"
    assert [w["text"] for w in second["words"]] == ["we", "walked", "home,", "slowly!"]
    assert [w["binary"] for w in second["words"]] == [False, True, False, False]
    assert Corpus.objects.get(name="EmphAssess").clips.count() == 4
    assert Clip.objects.get(external_id="emph_000").metadata == {"source_dataset": "EmphAssess"}


def test_tinystress_takes_the_split_files_and_flac_audio_with_llm_provenance(tmp_path):
    folder, audio = tinystress_folder(tmp_path)

    run("tinystress", folder, "--audio", audio, "--name", "TinyStress")

    label_set = LabelSet.objects.get(name="TinyStress")
    assert (label_set.label_source, label_set.label_kind) == ("llm", "binary")
    assert label_set.summary["counts"] == {"en": {"train": 4, "test": 2}}
    assert label_set.source["files"] == ["data/test.jsonl", "data/train.jsonl"]
    rows = {row["clip_id"]: row for row in label_set_rows(label_set_id=label_set.pk)}
    assert [w["binary"] for w in rows["0"]["words"]] == [True, False, True, False, False, False, False]
    assert rows["0"]["split"] == "train" and rows["4"]["split"] == "test"
    assert Clip.objects.get(external_id="0").source_path == "ts_0000.flac"


def test_stresstest_reads_stress_pattern_and_names_clips_by_their_audio(tmp_path):
    path, audio = stresstest_file(tmp_path)

    run("stresstest", path, "--audio", audio, "--name", "StressTest", "--splits", "test")

    label_set = LabelSet.objects.get(name="StressTest")
    assert label_set.label_source == "prescribed"
    rows = {row["clip_id"]: row for row in label_set_rows(label_set_id=label_set.pk)}
    assert sorted(rows) == ["st_0", "st_1", "st_2"]
    assert [w["binary"] for w in rows["st_1"]["words"]] == [False, False, True, False]


def test_the_label_source_can_be_said_otherwise_and_splits_drawn(tmp_path):
    gold, audio = emphassess_folder(tmp_path, count=10)

    run("emphassess", gold, "--audio", audio, "--name", "auto", "--splits", "assign", "--label-source", "automatic")

    label_set = LabelSet.objects.get(name="auto")
    assert label_set.label_source == "automatic"
    assert set(label_set.clips.values_list("split", flat=True)) == {"train", "validation", "test"}


def test_bad_records_are_named_by_file_line_and_field_and_nothing_is_written(tmp_path, media_storage):
    gold, audio = emphassess_folder(tmp_path)
    lines = gold.read_text().splitlines()
    second = json.loads(lines[1])
    second["gold_emphasis"] = [3]  # the "," token
    third = json.loads(lines[2])
    third["gold_emphasis"] = [40]
    (audio / "emph_003.wav").unlink()
    gold.write_text("\n".join([lines[0], json.dumps(second), json.dumps(third), lines[3], "{not json"]) + "\n")

    with pytest.raises(CommandError) as refused:
        run("emphassess", gold, "--audio", audio, "--name", "bad", "--splits", "test")

    message = str(refused.value)
    assert "gold_df.json: 4 bad row(s), nothing was imported" in message
    assert "gold_df.json line 2 (clip 'emph_001'), gold_emphasis: indices [3] mark punctuation, not a word" in message
    assert "gold_df.json line 3 (clip 'emph_002'), gold_emphasis: indices [40] are outside the 6 tokens" in message
    assert "gold_df.json line 4 (clip 'emph_003'), audio: no audio file 'emph_003.wav' or 'emph_003.flac'" in message
    assert "gold_df.json line 5: not JSON" in message
    assert not LabelSet.objects.exists() and not Clip.objects.exists()
    assert not any(path.is_file() for path in media_storage.rglob("*"))


def test_undecodable_audio_is_refused_on_its_record_and_no_file_stays(tmp_path, media_storage):
    gold, audio = emphassess_folder(tmp_path)
    (audio / "emph_002.wav").write_bytes(b"RIFF but not audio at all" * 10)

    with pytest.raises(CommandError) as refused:
        run("emphassess", gold, "--audio", audio, "--name", "bad audio", "--splits", "test")

    assert "gold_df.json line 3 (clip 'emph_002'), audio:" in str(refused.value)
    assert not LabelSet.objects.exists() and not Clip.objects.exists()
    assert not any(path.is_file() for path in media_storage.rglob("*"))


def test_stress_pattern_that_contradicts_itself_is_refused(tmp_path):
    path, audio = stresstest_file(tmp_path, count=1)
    row = json.loads(path.read_text())
    row["stress_pattern"]["indices"] = [0]
    path.write_text(json.dumps(row) + "\n")

    with pytest.raises(CommandError, match=r"test.jsonl line 1 \(clip 'st_0'\), stress_pattern.indices: \[0\] do not"):
        run("stresstest", path, "--audio", audio, "--name", "x", "--splits", "test")


def test_without_split_files_the_splits_must_be_chosen(tmp_path):
    gold, audio = emphassess_folder(tmp_path, count=1)
    with pytest.raises(CommandError, match=r"line 1 \(clip 'emph_000'\), split: the layout names no split"):
        run("emphassess", gold, "--audio", audio, "--name", "x")


def test_the_exports_data_card_says_where_the_labels_come_from(tmp_path, django_capture_on_commit_callbacks):
    gold, audio = emphassess_folder(tmp_path)
    run("emphassess", gold, "--audio", audio, "--name", "EmphAssess test", "--splits", "test")
    label_set = LabelSet.objects.get()

    entries = zip_entries(exported(django_capture_on_commit_callbacks, format="audiofolder", label_set=label_set))

    card = entries["README.md"].decode()
    assert "**labels**: EmphAssess: Prescribed by the script" in card and "binary labels" in card
    assert f"gold_df.json (SHA-256 {label_set.source['sha256']})" in card
    assert "**studies**: none (an imported set)" in card
    metadata = [json.loads(line) for line in entries["test/metadata.jsonl"].decode().splitlines()]
    assert len(metadata) == 4 and {value for row in metadata for value in row["scalar"]} == {None}


def test_the_admin_lists_and_shows_the_provenance(tmp_path, admin_client):
    gold, audio = emphassess_folder(tmp_path)
    run("emphassess", gold, "--audio", audio, "--name", "EmphAssess test", "--splits", "test")
    label_set = LabelSet.objects.get()

    listing = admin_client.get(reverse("admin:evaluation_labelset_changelist"), {"label_source__exact": "prescribed"})
    assert "EmphAssess test v1" in listing.content.decode()
    page = admin_client.get(reverse("admin:evaluation_labelset_change", args=[label_set.pk])).content.decode()
    assert "Prescribed by the script" in page and "Binary only (no scalar label)" in page
    assert label_set.source["sha256"] in page
