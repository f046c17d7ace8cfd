"""import_cast_items and import_system_outputs --suite cast: items, renditions as clips of the set's
renditions corpus (through the corpus import), every refusal, and that a refusal writes nothing."""

import json
import os

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Clip, Corpus, Study
from evaluation.models import CastItem, CastRendition, CastSet, System
from evaluation.services.system_outputs import OutputsRefused, system_outputs_import
from tests.evaluation.suites.fixtures import (
    CAST_ITEMS,
    CAST_WORDS,
    write_cast_items,
    write_cast_renditions,
    write_jsonl,
    zip_folder,
)

pytestmark = pytest.mark.django_db


def import_items(path, name="cast v1"):
    call_command("import_cast_items", str(path), "--set", name)


def refused(command, *args) -> str:
    with pytest.raises(CommandError) as caught:
        call_command(command, *map(str, args))
    return str(caught.value)


@pytest.fixture
def cast_set(tmp_path) -> CastSet:
    import_items(write_cast_items(tmp_path / "items.jsonl"))
    return CastSet.objects.get(name="cast v1")


def import_renditions(path, *args, system="tts-a"):
    call_command("import_system_outputs", str(path), "--suite", "cast", "--system", system, "--set", "cast v1", *args)


def files_in(media) -> list[str]:
    return sorted(name for _, _, names in os.walk(media) for name in names)


# -- items ---------------------------------------------------------------------------------------


def test_items_get_their_words_and_the_indices_of_word_a_and_word_b(tmp_path, capsys):
    import_items(write_cast_items(tmp_path / "items.jsonl"))

    items = {item.external_id: item for item in CastItem.objects.all()}
    assert {key: (item.word_a, item.word_b) for key, item in items.items()} == CAST_WORDS
    assert items["c03"].words == ["We", "meet", "on", "Tuesday,", "not", "Monday."]
    assert items["c01"].metadata == {"topic": "theft"} and items["c02"].metadata == {}
    assert items["c01"].context_b == "You said someone else stole it."
    assert "CAST set 'cast v1': 3 item(s) added, 0 already there unchanged; 3 in all." in capsys.readouterr().out


def test_a_word_list_given_is_checked_against_the_sentence(tmp_path):
    row = {**CAST_ITEMS[1], "words": ["Ann", "bought", "a", "red", "car"]}
    error = refused("import_cast_items", write_cast_items(tmp_path / "i.jsonl", [row]), "--set", "s")
    assert "line 1 (item 'c02'), words: word list does not match the transcript" in error

    row = {**CAST_ITEMS[1], "words": ["Ann", "bought", "the red", "car"], "word_b": "car"}
    import_items(write_cast_items(tmp_path / "j.jsonl", [row]), "s")
    assert CastItem.objects.get().words == ["Ann", "bought", "the red", "car"]
    assert CastItem.objects.get().word_b == 3


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"word_a": "nobody"}, "word_a: 'nobody' is not a word of the sentence"),
        ({"word_a": 9}, "word_a: 9 is out of range: the sentence has 6 words, 0 to 5"),
        ({"word_a": True}, "word_a: must be a word index or the word itself, not true"),
        ({"word_b": "never"}, "word_b: word_a and word_b are both word 1 ('never'); a pair needs two"),
        ({"sentence": "it is what it is", "word_a": "it", "word_b": 2}, "word_a: 'it' occurs 2 times in the sentence"),
        ({"context_a": ""}, "context_a: context_a must be non-empty text"),
        ({"metadata": [1]}, "metadata: must be a JSON object"),
        ({"speaker": "x"}, "speaker: unknown field 'speaker'"),
        ({"sentence": "x" * 5001}, "sentence: too long (5001 characters; at most 5000)"),
    ],
)
def test_a_bad_item_is_refused_naming_line_and_field(tmp_path, change, message):
    path = write_cast_items(tmp_path / "i.jsonl", [CAST_ITEMS[1], {**CAST_ITEMS[0], **change}])
    error = refused("import_cast_items", path, "--set", "s")

    assert error.startswith("i.jsonl: 1 bad row(s), nothing was imported")
    assert f"line 2 (item 'c01'), {message}" in error
    assert not CastSet.objects.exists() and not CastItem.objects.exists()


def test_items_already_in_the_set_must_be_unchanged(cast_set, tmp_path, capsys):
    import_items(write_cast_items(tmp_path / "again.jsonl", [*CAST_ITEMS, {**CAST_ITEMS[0], "id": "c04"}]))
    assert "1 item(s) added, 3 already there unchanged; 4 in all" in capsys.readouterr().out

    changed = {**CAST_ITEMS[0], "context_a": "Another context."}
    error = refused("import_cast_items", write_cast_items(tmp_path / "c.jsonl", [changed]), "--set", "cast v1")
    assert "line 1 (item 'c01'), context_a: already in set 'cast v1' with a different context_a; not overwritten" in (
        error
    )
    duplicate = refused("import_cast_items", write_cast_items(tmp_path / "d.jsonl", [CAST_ITEMS[0]] * 2), "--set", "x")
    assert "line 2 (item 'c01'), id: id 'c01' again; first on line 1" in duplicate


# -- renditions ----------------------------------------------------------------------------------


def test_renditions_become_clips_of_the_sets_renditions_corpus(cast_set, tmp_path, media_storage, capsys):
    import_renditions(write_cast_renditions(tmp_path / "tts-a"), "--version", "3")

    cast_set.refresh_from_db()
    assert cast_set.corpus.name == "cast v1 renditions"
    renditions = list(CastRendition.objects.select_related("item", "clip", "system").order_by("line"))
    assert [(r.item.external_id, r.side, r.mode, r.line) for r in renditions] == [
        ("c01", "A", "context", 1),
        ("c01", "B", "context", 2),
        ("c02", "A", "context", 3),
        ("c02", "B", "context", 4),
        ("c03", "A", "context", 5),
        ("c03", "B", "context", 6),
    ]
    clip = renditions[4].clip
    assert clip.corpus == cast_set.corpus and clip.transcript == "We meet on Tuesday, not Monday."
    assert [word.text for word in clip.words.all()] == ["We", "meet", "on", "Tuesday,", "not", "Monday."]
    assert clip.speaker.name == "tts-a" and clip.source_path == "wav/c03-A-context.wav"
    assert clip.metadata == {"cast_set": "cast v1", "cast_item": "c03", "side": "A", "mode": "context"}
    assert clip.model_audio.name.endswith("model.wav") and clip.browser_audio.name.endswith("browser.mp3")
    assert len({r.clip_id for r in renditions}) == 6
    assert (renditions[0].system.kind, renditions[0].system.version) == ("tts", "3")
    assert "6 rendition(s) of CAST set 'cast v1' (6 new clip(s) in corpus 'cast v1 renditions'" in (
        capsys.readouterr().out
    )
    assert len(files_in(media_storage)) == 18


def test_a_zip_of_renditions_in_several_modes(cast_set, tmp_path):
    folder = write_cast_renditions(tmp_path / "tts-b", system="tts-b", items=("c01",), modes=("none", "markup"))
    import_renditions(zip_folder(folder, tmp_path / "tts-b.zip"), system="tts-b")

    assert sorted(CastRendition.objects.values_list("side", "mode")) == [
        ("A", "markup"),
        ("A", "none"),
        ("B", "markup"),
        ("B", "none"),
    ]


def test_the_same_audio_for_both_sides_is_one_clip_and_existing_audio_is_reused(cast_set, tmp_path):
    folder = write_cast_renditions(tmp_path / "tts", items=("c01",), sides=("A",), modes=("none",))
    rows = [
        {"item": "c01", "side": "A", "mode": "none", "audio": "wav/c01-A-none.wav"},
        {"item": "c01", "side": "B", "mode": "none", "audio": "wav/c01-A-none.wav"},
    ]
    write_jsonl(folder / "renditions.jsonl", rows)
    import_renditions(folder)
    assert CastRendition.objects.count() == 2 and Clip.objects.count() == 1

    import_renditions(folder, system="tts-twin")  # another system, byte-identical audio
    assert CastRendition.objects.count() == 4 and Clip.objects.count() == 1


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"item": "c09"}, "line 1 (item 'c09'), item: unknown item 'c09': CAST set 'cast v1' has no item"),
        ({"side": "C"}, 'line 1 (item \'c01\'), side: must be "A" or "B"'),
        ({"mode": "prompted"}, 'mode: must be one of none, context, instruction, markup, not "prompted"'),
        ({"audio": "wav/missing.wav"}, "audio: audio file 'wav/missing.wav' not found"),
        ({"audio": "../outside.wav"}, "audio: path '../outside.wav' escapes its folder"),
        ({"word_times": [[0, 0.1]] * 6}, "word_times: word 1: [0.0, 0.1] must start at or after the previous"),
        ({"word_times": [[0, 0.1], "x"]}, 'word_times: word 1: "x" is not a [start, end] pair of seconds'),
        ({"word_times": [[0, 0.1]]}, "word_times: 1 [start, end] pairs for the 6 words of item 'c01'"),
    ],
)
def test_a_bad_rendition_line_is_refused_naming_line_and_field(cast_set, tmp_path, media_storage, row, message):
    folder = write_cast_renditions(tmp_path / "tts", items=("c01",), sides=("A",))
    write_jsonl(
        folder / "renditions.jsonl",
        [{"item": "c01", "side": "A", "mode": "context", "audio": "wav/c01-A-context.wav", **row}],
    )
    error = refused("import_system_outputs", folder, "--suite", "cast", "--system", "t", "--set", "cast v1")

    assert error.startswith("renditions.jsonl: 1 bad row(s), nothing was imported")
    assert message in error
    assert not (System.objects.exists() or CastRendition.objects.exists() or Corpus.objects.exists())
    assert files_in(media_storage) == []


def test_duplicate_renditions_are_refused(cast_set, tmp_path):
    folder = write_cast_renditions(tmp_path / "tts", items=("c01",), sides=("A",))
    row = {"item": "c01", "side": "A", "mode": "context", "audio": "wav/c01-A-context.wav"}
    write_jsonl(folder / "renditions.jsonl", [row, row])

    error = refused("import_system_outputs", folder, "--suite", "cast", "--system", "t", "--set", "cast v1")
    assert "line 2 (item 'c01'), item: item 'c01', side A, mode context again; first on line 1" in error


def test_audio_that_does_not_decode_is_refused_on_its_renditions_line_and_nothing_stays(
    cast_set, tmp_path, media_storage
):
    folder = write_cast_renditions(tmp_path / "tts")
    (folder / "wav" / "c02-B-context.wav").write_bytes(b"RIFF....WAVEfmt not really audio")
    error = refused("import_system_outputs", folder, "--suite", "cast", "--system", "t", "--set", "cast v1")

    assert error.startswith("renditions.jsonl: 1 bad row(s), nothing was imported")
    assert "line 4 (item 'c02'), audio: wav/c02-B-context.wav" in error
    assert not (Clip.objects.exists() or CastRendition.objects.exists() or System.objects.exists())
    assert CastSet.objects.get().corpus is None
    assert files_in(media_storage) == []


def test_a_failure_after_the_clips_were_stored_deletes_their_files(cast_set, tmp_path, media_storage, monkeypatch):
    def fail(*args, **kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(CastRendition.objects, "bulk_create", fail)
    with pytest.raises(RuntimeError):
        import_renditions(write_cast_renditions(tmp_path / "tts"))

    assert not (Clip.objects.exists() or System.objects.exists())
    assert files_in(media_storage) == []


def test_renditions_already_there_need_replace(cast_set, tmp_path):
    import_renditions(write_cast_renditions(tmp_path / "v1", items=("c01",)))
    second = write_cast_renditions(tmp_path / "v2", system="tts-a v2", items=("c02",))

    error = refused("import_system_outputs", second, "--suite", "cast", "--system", "tts-a", "--set", "cast v1")
    assert "system 'tts-a' already has renditions of CAST set 'cast v1'" in error and "--replace" in error

    import_renditions(second, "--replace")
    assert set(CastRendition.objects.values_list("item__external_id", flat=True)) == {"c02"}
    assert Clip.objects.count() == 4  # the replaced renditions' clips stay in the corpus


def test_a_cast_import_needs_a_known_set_and_no_study(tmp_path):
    folder = write_cast_renditions(tmp_path / "tts", items=("c01",))
    error = refused("import_system_outputs", folder, "--suite", "cast", "--system", "t", "--set", "nope")
    assert "no CAST set named 'nope'; import its items first (import_cast_items)" in error
    assert "need the CAST set they render (--set)" in refused(
        "import_system_outputs", folder, "--suite", "cast", "--system", "t"
    )
    write_cast_items(tmp_path / "items.jsonl")
    import_items(tmp_path / "items.jsonl")
    with pytest.raises(OutputsRefused, match="belong to a CAST set, not to a study"):
        system_outputs_import(
            path=folder, suite="cast", system_name="t", cast_set=CastSet.objects.get(), study=Study(slug="s")
        )
    (folder / "renditions.jsonl").rename(folder / "other.jsonl")
    assert "no renditions.jsonl found" in refused(
        "import_system_outputs", folder, "--suite", "cast", "--system", "t", "--set", "cast v1"
    )


def test_a_corpus_of_the_renditions_name_that_is_not_the_sets_is_refused(cast_set, tmp_path):
    Corpus.objects.create(name="cast v1 renditions")
    error = refused(
        "import_system_outputs",
        write_cast_renditions(tmp_path / "t", items=("c01",)),
        "--suite",
        "cast",
        "--system",
        "t",
        "--set",
        "cast v1",
    )
    assert "a corpus named 'cast v1 renditions' already exists and is not CAST set 'cast v1''s" in error
    assert json.dumps(list(CastRendition.objects.all())) == "[]"


def test_word_times_given_with_a_rendition_become_its_words_times(cast_set, tmp_path):
    folder = write_cast_renditions(tmp_path / "tts", items=("c01",), sides=("A",), timed=True)
    import_renditions(folder)
    times = json.loads((folder / "renditions.jsonl").read_text())["word_times"]
    clip = CastRendition.objects.get().clip
    assert [[word.start, word.end] for word in clip.words.order_by("index")] == times
