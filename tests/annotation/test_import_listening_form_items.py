"""import_form_items: both items.jsonl layouts, every refusal, and atomicity."""

import json
import os
import zipfile

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Clip, Corpus, ListeningFormItem, Study, StudyItem
from tests.audio_files import speechlike, write_audio

pytestmark = pytest.mark.django_db

SENTENCE = "I didn't say she stole the money"


class FormFolder:
    """A folder with items.jsonl and audio files, each audio file with its own signal."""

    def __init__(self, root):
        self.root, self.rows, self.seed = root, [], 0
        root.mkdir(parents=True, exist_ok=True)

    def audio(self, name: str) -> str:
        self.seed += 1
        write_audio(self.root / name, speechlike(1.0, seed=self.seed))
        return name

    def add(self, **row) -> dict:
        self.rows.append(row)
        return row

    def stresstest(self, n: int, **extra) -> dict:
        binary = [0] * 7
        binary[n % 7] = 1
        return self.add(
            **{
                "transcription": SENTENCE,
                "audio": self.audio(f"audio/sample_{n:02d}.wav"),
                "stress_pattern": {"binary": binary, "indices": [n % 7], "words": [SENTENCE.split()[n % 7]]},
                "possible_answers": ["Someone else said it", "I only implied it"],
                "label": n % 2,
                "metadata": {"stress_category": "contrastive" if n % 2 else "emphatic"},
                **extra,
            }
        )

    def write(self, text: str | None = None):
        (self.root / "items.jsonl").write_text(text or "".join(json.dumps(row) + "\n" for row in self.rows))
        return self.root


@pytest.fixture
def folder(tmp_path):
    return FormFolder(tmp_path / "pilot")


def run(path, *args, study="pilot study"):
    call_command("import_form_items", str(path), "--study", study, *args)


def refused(path, *args) -> str:
    with pytest.raises(CommandError) as caught:
        run(path, *args)
    return str(caught.value)


def assert_nothing_written(media):
    assert not (
        Study.objects.exists() or ListeningFormItem.objects.exists() or Clip.objects.exists() or Corpus.objects.exists()
    )
    assert [name for _, _, files in os.walk(media) for name in files] == []  # os.walk of no folder yields nothing


# -- StressTest layout ---------------------------------------------------------------------------


def test_stresstest_rows_become_single_choice_items_with_the_label_as_gold(folder):
    for n in range(3):
        folder.stresstest(n)
    run(folder.write(), "--language", "en")

    study = Study.objects.get(name="pilot study")
    assert (study.kind, study.status, study.clips_per_task, study.target_annotations) == ("form", "draft", 15, 3)
    items = list(ListeningFormItem.objects.filter(study=study).order_by("external_id"))
    assert [(i.external_id, i.item_type, i.gold) for i in items] == [
        ("sample_00", "single_choice", 0),
        ("sample_01", "single_choice", 1),
        ("sample_02", "single_choice", 0),
    ]
    assert items[1].options == ["Someone else said it", "I only implied it"]
    assert items[1].metadata == {"stress_category": "contrastive"}
    assert items[0].clip.transcript == SENTENCE and items[0].clip.language == "en" and study.language == "en"
    assert items[0].clip.corpus.name == "pilot" and items[0].clip.words.count() == 7
    assert StudyItem.objects.filter(study=study, form_item__isnull=False).count() == 3


def test_with_ssd_each_row_also_asks_for_the_stressed_words_of_the_same_clip(folder):
    folder.stresstest(2, id="st-2", label="I only implied it", interpretation_id=4)
    run(folder.write(), "--with-ssd", "--items-per-form", "2", "--answers-per-item", "5")

    choice, ssd = ListeningFormItem.objects.order_by("external_id")
    assert (choice.external_id, choice.gold) == ("st-2", 1)
    assert (ssd.external_id, ssd.item_type) == ("st-2-ssd", "stressed_words")
    assert ssd.gold == [0, 0, 1, 0, 0, 0, 0] and ssd.clip_id == choice.clip_id
    assert choice.metadata["interpretation_id"] == 4  # extra scalar fields are kept as metadata
    assert (choice.study.clips_per_task, choice.study.target_annotations) == (2, 5)


# -- generic layout ------------------------------------------------------------------------------


def test_generic_rows_of_every_type(folder):
    a, b = folder.audio("tts/a.wav"), folder.audio("tts/b_version.wav")
    folder.add(
        id="choice",
        type="single_choice",
        audio=a,
        transcript="she stole it",
        question="Who?",
        options=["She", "Someone else"],
        gold=1,
        metadata={"set": "x"},
    )
    folder.add(
        id="pair",
        type="pairwise",
        audio=a,
        audio_b=b,
        transcript="she stole it",
        settings={"allow_tie": True},
        gold="none",
    )
    folder.add(
        id="mos",
        type="rating",
        audio=b,
        options=["Bad", "Good"],
        settings={"values": [1, 5]},
        metadata={"system": "tts-b"},
    )
    folder.add(
        id="warm",
        type="stance",
        audio=a,
        settings={
            "dimension": "warmth",
            "positive": "warm",
            "negative": "cold",
            "definitions": {"positive": "friendly", "negative": "distant"},
        },
    )
    folder.add(id="ssd", type="stressed_words", audio=a, transcript="she stole it", gold=[0, 1, 0])
    folder.add(id="slider", type="rating", audio=b)
    run(folder.write(), "--corpus", "tts")

    items = {item.external_id: item for item in ListeningFormItem.objects.select_related("clip", "second_clip")}
    assert items["choice"].prompt == "Who?" and items["choice"].gold == 1
    assert items["pair"].second_clip.source_path == "tts/b_version.wav" and items["pair"].gold == "none"
    assert items["mos"].settings == {"values": [1, 5]} and items["slider"].options == []
    assert items["warm"].settings == {
        "dimension": "warmth",
        "positive": "warm",
        "negative": "cold",
        "positive_definition": "friendly",
        "negative_definition": "distant",
    }
    assert items["ssd"].gold == [0, 1, 0]
    assert Clip.objects.count() == 2  # one clip per distinct audio file
    assert items["mos"].clip.transcript == "she stole it"  # clip B of the pair says the same sentence
    assert Corpus.objects.get().name == "tts"


def test_a_language_without_spaces_takes_its_word_list_from_the_row(folder, media_storage):
    row = folder.add(
        id="zh",
        type="stressed_words",
        audio=folder.audio("audio/zh.wav"),
        language="zh",
        transcript="我没说她偷了钱",
        gold=[0, 0, 0, 1, 0, 0],
    )
    assert "line 1 (item 'zh'), words: 'zh' is written without spaces" in refused(folder.write())
    assert_nothing_written(media_storage)

    row["words"] = ["我", "没", "说", "她", "偷了", "钱"]
    run(folder.write())

    item = ListeningFormItem.objects.get()
    assert item.gold == [0, 0, 0, 1, 0, 0] and list(item.clip.words.values_list("text", flat=True)) == row["words"]


def test_a_clip_without_any_transcript_is_named_after_its_file_and_a_zip_works(folder, tmp_path):
    folder.add(id="mos", type="rating", audio=folder.audio("audio/tts_sys-a.001.wav"))
    folder.write()
    archive = tmp_path / "forms.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in folder.root.rglob("*"):
            bundle.write(path, path.relative_to(folder.root.parent))

    run(archive)

    assert Clip.objects.get().transcript == "tts sys a 001" and Corpus.objects.get().name == "forms"


def test_importing_again_into_the_same_corpus_reuses_the_clips(folder):
    folder.stresstest(1)
    run(folder.write())
    run(folder.root, study="second study")

    assert Clip.objects.count() == 1 and ListeningFormItem.objects.count() == 2


# -- refusals: line-numbered, nothing written -----------------------------------------------------

GOOD = {"id": "ok", "type": "single_choice", "audio": "audio/ok.wav", "options": ["x", "y"], "gold": 0}
REFUSALS = [
    (
        {"id": "q", "type": "single_choice", "audio": "audio/ok.wav", "options": ["x", "y"], "gold": 2},
        "line 2 (item 'q'), gold: 2 is out of range: the item has 2 options, 0 to 1",
    ),
    (
        {"transcription": "a b", "audio": "audio/ok.wav", "possible_answers": ["x", "y"], "label": 3},
        "line 2 (item 'ok'), label: 3 is out of range",
    ),
    (
        {"id": "q", "type": "single_choice", "audio": "audio/ok.wav", "options": ["only"]},
        "line 2 (item 'q'), options: a single_choice item needs at least 2 options, got 1",
    ),
    ({"id": "q", "type": "single_choice", "options": ["x", "y"]}, "line 2 (item 'q'), audio: missing audio path"),
    (
        {"id": "q", "type": "rating", "audio": "audio/none.wav"},
        "line 2 (item 'q'), audio: audio file 'audio/none.wav' not found",
    ),
    ({"id": "q", "type": "ranking", "audio": "audio/ok.wav"}, "line 2 (item 'q'), type: unknown item type 'ranking'"),
    (
        {"id": "ok", "type": "rating", "audio": "audio/ok.wav"},
        "line 2 (item 'ok'), id: duplicate id, first used on line 1",
    ),
    (
        {"id": "q", "type": "stance", "audio": "audio/ok.wav", "settings": {"dimension": "warmth"}},
        "line 2 (item 'q'), settings: a stance item needs its two poles",
    ),
    (
        {"id": "q", "type": "pairwise", "audio": "audio/ok.wav"},
        "line 2 (item 'q'), audio_b: a pairwise item needs audio_b",
    ),
    (
        {"id": "q", "type": "stressed_words", "audio": "audio/ok.wav", "transcript": "one two three", "gold": [0, 1]},
        "line 2 (item 'q'), gold: has 2 values but the transcript has 3 words",
    ),
    (
        {"id": "q", "type": "single_choice", "audio": "audio/ok.wav", "options": ["x", "y"], "optons": []},
        "line 2 (item 'q'), optons: unknown field 'optons'",
    ),
    ({"id": "q", "type": "rating", "audio": "../ok.wav"}, "line 2 (item 'q'), audio: path '../ok.wav' escapes"),
    (
        {"id": "q", "type": "rating", "audio": "audio/ok.wav", "transcript": "something else"},
        "line 2 (item 'q'), audio: 'audio/ok.wav' has the transcript 'ok words' on line 1, here 'something else'",
    ),
    ({"audio": "audio/ok.wav"}, "line 2, type: unknown layout"),
]


@pytest.mark.parametrize(("row", "message"), REFUSALS, ids=[message.split(": ")[1][:30] for _, message in REFUSALS])
def test_a_bad_row_is_refused_with_its_line_and_nothing_is_written(folder, media_storage, row, message):
    folder.audio("audio/ok.wav")
    folder.add(**GOOD, transcript="ok words")
    folder.add(**row)

    error = refused(folder.write())

    assert message in error and "items.jsonl: 1 bad row(s), nothing was imported" in error
    assert_nothing_written(media_storage)


def test_stress_vector_of_the_wrong_length_is_refused_with_ssd_only(folder, media_storage):
    row = folder.stresstest(1)
    row["stress_pattern"]["binary"] = [0, 1, 0]
    folder.write()

    assert "line 1 (item 'sample_01'), stress_pattern.binary: has 3 values but the transcript has 7 words" in refused(
        folder.root, "--with-ssd"
    )
    assert_nothing_written(media_storage)
    run(folder.root)  # without --with-ssd the vector is not used
    assert ListeningFormItem.objects.count() == 1


def test_undecodable_audio_is_reported_on_every_line_that_uses_it(folder, media_storage):
    folder.stresstest(1)
    (folder.root / "audio/broken.wav").write_bytes(b"RIFF" + os.urandom(2000))
    folder.add(id="a", type="rating", audio="audio/broken.wav")
    folder.add(id="b", type="pairwise", audio="audio/sample_01.wav", audio_b="audio/broken.wav")

    error = refused(folder.write())

    assert "line 2 (item 'a'), audio: audio/broken.wav" in error
    assert "line 3 (item 'b'), audio_b: audio/broken.wav" in error
    assert_nothing_written(media_storage)


def test_not_json_and_several_problems_are_listed_together(folder, media_storage):
    folder.audio("audio/ok.wav")
    text = json.dumps(GOOD) + "\n{not json\n" + json.dumps({**GOOD, "gold": -1}) + "\n"

    error = refused(folder.write(text))

    assert "2 bad row(s)" in error and "line 2: not valid JSON" in error and "line 3 (item 'ok'), gold: -1" in error
    assert_nothing_written(media_storage)


def test_an_existing_study_name_and_a_missing_items_file_are_refused(folder, tmp_path):
    folder.stresstest(1)
    run(folder.write())
    assert "a study named 'pilot study' already exists" in refused(folder.root)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CommandError, match=r"no items\.jsonl found"):
        run(tmp_path / "empty", study="another study")


def test_a_failure_after_the_clips_were_stored_removes_them(folder, media_storage, monkeypatch):
    folder.stresstest(1)

    def broken(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr("annotation.services.form_items_import.listening_form_study_create", broken)
    with pytest.raises(RuntimeError):
        run(folder.write())
    assert_nothing_written(media_storage)


def test_skip_invalid_imports_the_good_rows_and_lists_the_bad(folder, capsys):
    folder.stresstest(1)
    folder.stresstest(2, label=9)
    (folder.root / "audio/broken.wav").write_bytes(b"RIFF" + os.urandom(2000))
    folder.add(id="broken", type="rating", audio="audio/broken.wav")
    run(folder.write(), "--skip-invalid")

    assert list(ListeningFormItem.objects.values_list("external_id", flat=True)) == ["sample_01"]
    assert Clip.objects.count() == 1
    out = capsys.readouterr().out
    assert "line 2 (item 'sample_02'), label: 9 is out of range" in out and "line 3 (item 'broken'), audio" in out


# -- limits (issue 15) ---------------------------------------------------------------------------


def test_an_items_file_over_the_size_limit_is_refused_unread(folder, media_storage, settings):
    from annotation.ingest import listening_form_rows

    folder.write("\n" * (listening_form_rows.MAX_ITEMS_FILE_BYTES + 1))

    assert "items.jsonl is" in refused(folder.root) and "the limit is" in refused(folder.root)
    assert_nothing_written(media_storage)


def test_a_field_over_the_size_limit_is_a_problem_of_its_line(folder, media_storage):
    from annotation.ingest import listening_form_rows

    long = "x" * (listening_form_rows.MAX_FIELD_CHARS + 1)
    folder.audio("audio/ok.wav")
    folder.add(id="q", type="single_choice", audio="audio/ok.wav", prompt=long, options=["a", "b"])
    folder.add(id="r", type="single_choice", audio="audio/ok.wav", options=["a", long])

    error = refused(folder.write())

    assert "line 1 (item 'q'), prompt: too long" in error and "line 2 (item 'r'), options: too long" in error
    assert_nothing_written(media_storage)


def test_many_bad_rows_list_the_first_problems_and_count_the_rest(folder, media_storage):
    for n in range(60):
        folder.add(id=f"q{n}", type="nonsense", audio="audio/ok.wav")

    error = refused(folder.write())

    assert "items.jsonl: 60 bad row(s), nothing was imported" in error
    assert "line 20 (item 'q19')" in error and "line 21 (item" not in error
    assert "and 40 more problem(s)" in error
