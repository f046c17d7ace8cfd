import csv
import json
import os
import zipfile

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Clip, ClipWarning, Corpus, Speaker, Word
from tests.audio_files import speechlike, write_audio

pytestmark = pytest.mark.django_db


def run_import(path, *args):
    call_command("import_corpus", str(path), "--no-progress", *args)


def assert_nothing_written(media):
    assert Corpus.objects.count() == 0
    assert Clip.objects.count() == 0
    assert Word.objects.count() == 0
    stored = [name for _, _, files in os.walk(media) for name in files] if media.exists() else []
    assert stored == []


def refused(path, *args) -> str:
    with pytest.raises(CommandError) as caught:
        run_import(path, *args)
    return str(caught.value)


def test_demo_manifest_imports_every_clip(demo_corpus_copy):
    rows = (demo_corpus_copy / "manifest.jsonl").read_text().splitlines()

    run_import(demo_corpus_copy, "--corpus", "demo")

    assert Clip.objects.count() == len(rows) >= 60
    clip = Clip.objects.get(external_id=json.loads(rows[0])["id"])
    assert clip.metadata["synthetic"] is True
    assert clip.words.count() == len(json.loads(rows[0])["words"])
    assert clip.original_audio and clip.model_audio and clip.browser_audio


def test_model_copy_is_16khz_mono_16bit_wav(corpus_folder):
    write_audio(corpus_folder.root / "audio/stereo.flac", speechlike(1.0, 44100).repeat(2).reshape(-1, 2), 44100)
    corpus_folder.rows.append({"id": "stereo", "audio": "audio/stereo.flac", "transcript": "hello there"})
    corpus_folder.write_jsonl()

    run_import(corpus_folder.root)

    clip = Clip.objects.get()
    assert (clip.sample_rate, clip.channels) == (44100, 2)
    assert clip.duration == pytest.approx(1.0, abs=0.01)
    with clip.model_audio.open("rb") as handle:
        import wave

        with wave.open(handle) as model:
            assert (model.getframerate(), model.getnchannels(), model.getsampwidth()) == (16000, 1, 2)
            assert model.getnframes() == pytest.approx(16000, abs=20)
    with clip.browser_audio.open("rb") as handle:
        assert handle.read(3) == b"ID3"


@pytest.mark.parametrize("suffix", [".wav", ".flac", ".mp3", ".ogg", ".m4a"])
def test_each_audio_format_decodes(corpus_folder, suffix):
    corpus_folder.add("clip", suffix=suffix, seconds=1.2)
    corpus_folder.write_jsonl()

    run_import(corpus_folder.root)

    assert Clip.objects.get().duration == pytest.approx(1.2, abs=0.06)


def test_fields_words_speaker_and_metadata_are_stored(corpus_folder):
    corpus_folder.add(
        "c1",
        "Hello, brave world!",
        speaker="spk1",
        emotion="happy",
        variety="en-GB",
        session=7,
        words=[
            {"text": "Hello,", "start": 0.1, "end": 0.4},
            {"text": "brave", "start": 0.4, "end": 0.8},
            {"text": "world!", "start": 0.8, "end": 1.3},
        ],
    )
    corpus_folder.write_jsonl()

    run_import(corpus_folder.root, "--corpus", "mine")

    clip = Clip.objects.select_related("speaker", "corpus").get()
    assert (clip.corpus.name, clip.speaker.name, clip.emotion, clip.variety) == ("mine", "spk1", "happy", "en-GB")
    assert clip.metadata == {"session": 7}
    assert [(w.index, w.text, w.start, w.end) for w in clip.words.all()] == [
        (0, "Hello,", 0.1, 0.4),
        (1, "brave", 0.4, 0.8),
        (2, "world!", 0.8, 1.3),
    ]


def test_transcript_without_word_list_is_split_and_punctuation_is_not_a_word(corpus_folder):
    corpus_folder.add("c1", "Well — it is, isn't it ?")
    corpus_folder.write_jsonl()

    run_import(corpus_folder.root)

    assert list(Word.objects.values_list("text", flat=True)) == ["Well", "it", "is,", "isn't", "it"]


def test_reimporting_the_same_manifest_adds_nothing(corpus_folder, capsys):
    corpus_folder.add("c1")
    corpus_folder.add("c2", "a second clip")
    corpus_folder.write_jsonl()
    run_import(corpus_folder.root, "--corpus", "x")
    capsys.readouterr()

    run_import(corpus_folder.root, "--corpus", "x")

    assert Clip.objects.count() == 2 and Word.objects.count() == 9
    assert "0 clip(s) imported, 2 already present and unchanged" in capsys.readouterr().out


def test_a_changed_row_is_reported_not_overwritten(corpus_folder):
    corpus_folder.add("c1")
    corpus_folder.write_jsonl()
    run_import(corpus_folder.root, "--corpus", "x")
    corpus_folder.rows[0]["transcript"] = "a dog sat on the mat"
    corpus_folder.write_jsonl()

    message = refused(corpus_folder.root, "--corpus", "x")

    assert "line 1 (clip 'c1'), transcript: clip already imported with a different transcript, words" in message
    assert Clip.objects.get().transcript == "the cat sat on the mat"


def test_new_rows_are_added_to_an_existing_corpus(corpus_folder):
    corpus_folder.add("c1")
    corpus_folder.write_jsonl()
    run_import(corpus_folder.root, "--corpus", "x")
    corpus_folder.add("c2", "another one here")
    corpus_folder.write_jsonl()

    run_import(corpus_folder.root, "--corpus", "x")

    assert sorted(Clip.objects.values_list("external_id", flat=True)) == ["c1", "c2"]


BAD_ROWS = {
    "missing audio file": (lambda f: f.add("bad", write=False), "audio: audio file 'audio/bad.wav' not found"),
    "empty transcript": (lambda f: f.add("bad", "  "), "transcript: empty transcript"),
    "word list does not match": (
        lambda f: f.add("bad", "the cat sat", words=["the", "dog", "sat"]),
        "words: word list does not match the transcript: word 1 is 'dog'",
    ),
    "word list too short": (
        lambda f: f.add("bad", "the cat sat", words=["the", "cat"]),
        "words: word list does not match the transcript: it ends before 'sat'",
    ),
    "word times out of order": (
        lambda f: f.add(
            "bad",
            "one two",
            words=[{"text": "one", "start": 0.5, "end": 0.7}, {"text": "two", "start": 0.2, "end": 0.4}],
        ),
        "words: word times out of order: word 1 ('two') starts at 0.2 s, before word 0 ('one') at 0.5 s",
    ),
    "word past the end": (
        lambda f: f.add(
            "bad",
            "one two",
            seconds=1.0,
            words=[{"text": "one", "start": 0.1, "end": 0.5}, {"text": "two", "start": 0.5, "end": 3.0}],
        ),
        "words: word 1 ('two') ends at 3.0 s, past the clip's end at 1.000 s",
    ),
    "duplicate clip id": (
        lambda f: f.add("c0", seed=9),
        "line 2 (clip 'c0'), id: duplicate clip id, first used on line 1",
    ),
    "undecodable audio": (
        lambda f: (
            f.add("bad", write=False),
            (f.root / "audio/bad.wav").write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt garbage"),
        ),
        "audio: audio/bad.wav: undecodable audio",
    ),
    "text posing as audio": (
        lambda f: (
            f.add("bad", suffix=".mp3", write=False),
            (f.root / "audio/bad.mp3").write_text("just text, honest"),
        ),
        "audio: audio/bad.mp3: not an audio file (its content matches no audio format)",
    ),
    "image posing as audio": (
        lambda f: (
            f.add("bad", write=False),
            (f.root / "audio/bad.wav").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64),
        ),
        "audio: audio/bad.wav: not an audio file (its content is image/png)",
    ),
    "path escaping the folder": (
        lambda f: f.rows.append({"id": "bad", "audio": "../outside.wav", "transcript": "x y"}),
        "audio: path '../outside.wav' escapes its folder with '..'",
    ),
    "absolute path": (
        lambda f: f.rows.append({"id": "bad", "audio": "/etc/passwd", "transcript": "x y"}),
        "audio: path '/etc/passwd' has an absolute path",
    ),
    "missing required field": (
        lambda f: f.rows.append({"id": "bad", "audio": "audio/c0.wav"}),
        "line 2 (clip 'bad'), transcript: missing required field 'transcript'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_each_bad_row_refuses_the_whole_import(corpus_folder, media_storage, case):
    make_bad, expected = BAD_ROWS[case]
    corpus_folder.add("c0")
    make_bad(corpus_folder)
    corpus_folder.write_jsonl()

    message = refused(corpus_folder.root)

    assert expected in message
    assert "nothing was imported" in message
    assert_nothing_written(media_storage)


def test_every_bad_row_is_listed_with_its_line(corpus_folder, media_storage):
    corpus_folder.add("good")
    corpus_folder.add("no-file", write=False)
    corpus_folder.add("empty", " ")
    corpus_folder.add("good2", "more words here")
    corpus_folder.write_jsonl()

    message = refused(corpus_folder.root)

    assert "2 bad row(s)" in message
    assert "line 2 (clip 'no-file'), audio" in message and "line 3 (clip 'empty'), transcript" in message
    assert_nothing_written(media_storage)


def test_clip_too_long_is_refused(corpus_folder, settings, media_storage):
    settings.IMPORT_MAX_CLIP_SECONDS = 2
    corpus_folder.add("long", seconds=3.5)
    corpus_folder.write_jsonl()

    assert "clip is longer than 2 s (IMPORT_MAX_CLIP_SECONDS)" in refused(corpus_folder.root)
    assert_nothing_written(media_storage)


def test_file_over_size_limit_is_refused(corpus_folder, settings, media_storage):
    settings.IMPORT_MAX_FILE_BYTES = 1000
    corpus_folder.add("big", seconds=1.0)
    corpus_folder.write_jsonl()

    assert "the limit is 1000 (IMPORT_MAX_FILE_BYTES)" in refused(corpus_folder.root)
    assert_nothing_written(media_storage)


def test_symlinked_audio_is_refused(corpus_folder, tmp_path, media_storage):
    outside = write_audio(tmp_path / "outside.wav", speechlike(1.0))
    corpus_folder.add("c0")
    (corpus_folder.root / "audio" / "link.wav").symlink_to(outside)
    corpus_folder.rows.append({"id": "link", "audio": "audio/link.wav", "transcript": "x y"})
    corpus_folder.write_jsonl()

    assert "line 2 (clip 'link'), audio: 'audio/link.wav' goes through a link" in refused(corpus_folder.root)
    assert_nothing_written(media_storage)


def test_skip_invalid_imports_good_rows_and_writes_a_report(corpus_folder, tmp_path, capsys):
    corpus_folder.add("good")
    corpus_folder.add("missing", write=False)
    corpus_folder.write_jsonl()
    report = tmp_path / "report.csv"

    run_import(corpus_folder.root, "--skip-invalid", "--report", str(report))

    assert list(Clip.objects.values_list("external_id", flat=True)) == ["good"]
    rows = list(csv.DictReader(report.open()))
    assert rows == [
        {"line": "2", "clip_id": "missing", "field": "audio", "reason": "audio file 'audio/missing.wav' not found"}
    ]
    assert "1 row(s) skipped" in capsys.readouterr().out


def test_csv_manifest_with_word_list(corpus_folder):
    corpus_folder.add("c1", "one two")
    lines = [
        "id,audio,transcript,words,speaker,mic\n",
        'c1,audio/c1.wav,one two,"[{""text"": ""one"", ""start"": 0.1, ""end"": 0.5}, {""text"": ""two"", ""start"": 0.5, ""end"": 1.0}]",s9,usb\n',
    ]
    (corpus_folder.root / "manifest.csv").write_text("".join(lines))

    run_import(corpus_folder.root)

    clip = Clip.objects.get()
    assert clip.metadata == {"mic": "usb"} and clip.speaker.name == "s9"
    assert list(clip.words.values_list("end", flat=True)) == [0.5, 1.0]


def test_csv_manifest_missing_required_column(corpus_folder, media_storage):
    corpus_folder.add("c1")
    (corpus_folder.root / "manifest.csv").write_text("id,audio\nc1,audio/c1.wav\n")

    assert "manifest.csv, line 1: missing required column 'transcript'" in refused(corpus_folder.root)
    assert_nothing_written(media_storage)


def test_zip_archive_imports(corpus_folder, tmp_path):
    corpus_folder.add("c1")
    corpus_folder.write_jsonl()
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in corpus_folder.root.rglob("*"):
            bundle.write(path, f"corpus/{path.relative_to(corpus_folder.root)}")

    run_import(archive)

    assert Clip.objects.get().corpus.name == "bundle"


def test_signal_warnings_are_stored(corpus_folder):
    write_audio(corpus_folder.root / "audio/quiet-start.wav", speechlike(3.0, lead=1.5, tail=0.1))
    corpus_folder.rows.append({"id": "quiet-start", "audio": "audio/quiet-start.wav", "transcript": "x y"})
    corpus_folder.write_jsonl()

    run_import(corpus_folder.root)

    assert list(ClipWarning.objects.values_list("code", flat=True)) == ["leading_silence"]


def test_speakers_are_shared_within_a_corpus(corpus_folder):
    corpus_folder.add("c1", speaker="s1")
    corpus_folder.add("c2", "other words", speaker="s1")
    corpus_folder.write_jsonl()

    run_import(corpus_folder.root)

    assert Speaker.objects.count() == 1


@pytest.mark.parametrize("language", ["zh", "zh-CN", "cmn", "ja", "th"])
def test_a_language_without_spaces_needs_a_word_list(corpus_folder, media_storage, language):
    corpus_folder.add("c0")
    corpus_folder.add("zh", "我喜欢音乐", language=language)
    corpus_folder.write_jsonl()

    message = refused(corpus_folder.root)

    assert f"line 2 (clip 'zh'), words: language '{language}' is written without spaces between words" in message
    assert_nothing_written(media_storage)


def test_mandarin_with_a_word_list_keeps_its_words(corpus_folder):
    corpus_folder.add("zh", "我喜欢音乐。", language="zh", words=["我", "喜欢", "音乐"])
    corpus_folder.write_jsonl()

    run_import(corpus_folder.root)

    assert list(Word.objects.values_list("text", flat=True)) == ["我", "喜欢", "音乐"]
