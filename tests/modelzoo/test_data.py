"""Reading export folders and choosing each setting's clips (pure: no torch)."""

import json

import numpy as np
import pytest

from modelzoo.training.data import Clip, Word, languages, load_folder, read_wav, training_subset, write_wav
from modelzoo.training.experiments import Setting, partition
from modelzoo.training.synthetic import synthetic_set, write_export_folder


def test_wav_round_trip_at_16_khz(tmp_path):
    audio = np.sin(np.linspace(0, 100, 16000)).astype(np.float32) * 0.5
    write_wav(tmp_path / "a.wav", audio)
    back = read_wav(tmp_path / "a.wav")
    assert back.dtype == np.float32 and back.shape == audio.shape
    assert np.max(np.abs(back - audio)) < 1e-4


def test_the_loader_reads_the_jsonl_and_audiofolder_exports(export_folder):
    clips = load_folder(export_folder)
    assert len(clips) == 40 and languages(clips) == ["de", "en"]
    first = clips[0]
    assert first.clip_id == "en-0000" and first.split == "train" and first.arousal == "high" and first.scale_step == 10
    assert first.audio_path == export_folder / "train" / "en-0000.wav" and first.audio.dtype == np.float32
    assert first.has_word_times and all(isinstance(word, Word) for word in first.words)
    rows = [json.loads(line) for line in (export_folder / "clips.jsonl").read_text().splitlines()]
    assert [w.text for w in first.words] == [w["text"] for w in rows[0]["words"]]
    assert [w.binary for w in first.words] == [int(w["binary"]) for w in rows[0]["words"]]


def test_the_loader_reads_an_audiofolder_alone_without_word_times(tmp_path):
    clips = synthetic_set(10, seed=1)
    write_export_folder(tmp_path, clips, clips_jsonl=False, with_times=False)
    loaded = {clip.clip_id: clip for clip in load_folder(tmp_path)}
    assert set(loaded) == {clip.clip_id for clip in clips}
    test_clip = loaded["en-0009"]
    assert test_clip.split == "test" and test_clip.scale_step is None  # the audiofolder writes 0
    assert not test_clip.has_word_times and test_clip.words[0].start is None
    assert [w.scalar for w in test_clip.words] == [w.scalar for w in clips[9].words]


def test_a_folder_without_an_export_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"clips\.jsonl"):
        load_folder(tmp_path)


def clip(clip_id, language, split, arousal="high", scale_step=None):
    return Clip(
        clip_id=clip_id,
        language=language,
        split=split,
        words=(Word("a", 0, 1, 1, 1.0),),
        arousal=arousal,
        scale_step=scale_step,
        variety=f"{language}-X",
    )


@pytest.fixture
def clips():
    rows = []
    for language in ("en", "de", "zh"):
        for i, split in enumerate(["train"] * 4 + ["validation", "test", "test"]):
            arousal = ("high", "low")[i % 2]
            rows.append(clip(f"{language}{i}", language, split, arousal, 25 * (i + 1) if split == "train" else None))
    return rows


def ids(subset):
    return sorted(c.clip_id for c in subset)


def test_monolingual_and_cross_lingual(clips):
    mono = partition(Setting("monolingual", language="de"), clips)
    assert ids(mono.train) == ["de0", "de1", "de2", "de3"] and ids(mono.test) == ["de5", "de6"]
    cross = partition(Setting("cross-lingual", language="de"), clips)
    assert ids(cross.train) == ids(mono.train) and ids(cross.validation) == ["de4"]
    assert ids(cross.test) == ["en5", "en6", "zh5", "zh6"]  # every other language


def test_multilingual_uses_everything(clips):
    multi = partition(Setting("multilingual"), clips)
    assert multi.sizes() == {"train": 12, "validation": 3, "test": 6}


def test_a_variety_can_be_the_language(clips):
    assert ids(partition(Setting("monolingual", language="zh-X", by="variety"), clips).test) == ["zh5", "zh6"]


def test_cross_arousal(clips):
    high_to_low = partition(Setting("cross-arousal", train_arousal="high", test_arousal="low"), clips)
    assert all(c.arousal == "high" for c in high_to_low.train + high_to_low.validation)
    assert all(c.arousal == "low" for c in high_to_low.test) and len(high_to_low.test) == 3


def test_data_scale_subsets_are_nested_and_evaluation_is_fixed(clips):
    half = partition(Setting("data-scale", percent=50), clips)
    full = partition(Setting("data-scale", percent=100), clips)
    assert ids(half.train) == ["de0", "de1", "en0", "en1", "zh0", "zh1"]
    assert set(ids(half.train)) < set(ids(full.train)) == set(ids(training_subset(clips, 100)))
    assert ids(half.validation) == ids(full.validation) and ids(half.test) == ids(full.test)


def test_cross_dataset_tests_on_the_other_sets_test_split(clips):
    other = [clip("x1", "en", "test"), clip("x2", "en", "train"), clip("x3", "fr", "test")]
    chosen = partition(Setting("cross-dataset", language="en", test_language="en"), clips, other)
    assert ids(chosen.train) == ["en0", "en1", "en2", "en3"] and ids(chosen.test) == ["x1"]
    with pytest.raises(ValueError, match="cross-dataset"):
        partition(Setting("multilingual"), clips, other)


def test_settings_say_what_they_lack(clips):
    with pytest.raises(ValueError, match="needs a training language"):
        Setting("monolingual")
    with pytest.raises(ValueError, match="unknown setting"):
        Setting("bilingual")
    with pytest.raises(ValueError, match="no training clips"):
        partition(Setting("monolingual", language="fr"), clips)
