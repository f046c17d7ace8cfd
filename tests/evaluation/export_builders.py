"""Final label sets and their exports, for the dataset-export tests.

`golden_study` (tests/evaluation/builders.py) has no audio files and no word times; exports that
need them (audiofolder, TextGrid) use `audio_study`, which imports a small real corpus (16 kHz
WAVs in storage, word times for all clips but one) and annotates it with factories.
"""

import io
import os
import wave
import zipfile

import numpy as np
import pytest

from annotation.models import Corpus
from annotation.services.corpus_import import corpus_import
from evaluation.models import DatasetExport, LabelSet
from evaluation.services.dataset_exports import dataset_export_request
from evaluation.services.label_sets import label_set_create, label_set_default_parameters, label_set_finalize
from tests.annotation.factories import (
    AnnotationFactory,
    ParticipantFactory,
    StudyFactory,
    StudyItemFactory,
    TaskFactory,
    TaskItemFactory,
)

WORDS = ("we", "never", "said", "she", "took", "the", "money")
AUDIO_CLIPS = ("clip-00", "clip-01", "clip-02", "clip-03", "odd id/4", "clip-05", "clip-06", "clip-07")
UNTIMED = "clip-02"  # imported without word times: left out of the TextGrids


def final_label_set(study, capture, *, name="golden labels", **overrides) -> LabelSet:
    """Build (eagerly, on commit) and finalize a set of `study`; `capture` is pytest-django's
    django_capture_on_commit_callbacks."""
    parameters = label_set_default_parameters(studies=[study], resamples=20, **overrides)
    with capture(execute=True):
        label_set = label_set_create(name=name, studies=[study], parameters=parameters)
    label_set.refresh_from_db()
    assert label_set.status == LabelSet.Status.SUCCEEDED, label_set.error
    return label_set_finalize(label_set=label_set)


def exported(capture, **request) -> DatasetExport:
    """An export, built by the (eager) worker once its row is committed."""
    with capture(execute=True):
        export = dataset_export_request(**request)
    export.refresh_from_db()
    return export


def zip_entries(export: DatasetExport) -> dict[str, bytes]:
    assert export.status == DatasetExport.Status.SUCCEEDED, export.error
    with export.file.open("rb") as handle, zipfile.ZipFile(io.BytesIO(handle.read())) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def audio_study(corpus_folder, *, slug="voices"):
    """Eight imported clips in two languages, each annotated by the same three participants."""
    for index, clip_id in enumerate(AUDIO_CLIPS):
        words = WORDS[: 4 + index % 3]
        timed = [
            {"text": word, "start": round(0.1 + 0.2 * k, 3), "end": round(0.3 + 0.2 * k, 3)}
            for k, word in enumerate(words)
        ]
        corpus_folder.add(
            clip_id,
            " ".join(words),
            seconds=1.6,
            language=("en", "de")[index % 2],
            speaker=f"s{index % 3}",
            emotion=("happy", "calm")[index % 2],
            **({} if clip_id == UNTIMED else {"words": timed}),
        )
    corpus_folder.write_jsonl()
    corpus_import(path=corpus_folder.root, corpus_name=slug)
    corpus = Corpus.objects.get(name=slug)
    study = StudyFactory(corpus=corpus, slug=slug, name=slug, target_annotations=3)
    clips = list(corpus.clips.order_by("external_id"))
    for clip in clips:
        StudyItemFactory(study=study, clip=clip)
    for person in range(3):
        task = TaskFactory(participant=ParticipantFactory(study=study, prolific_pid=f"{slug}{person:020d}"))
        for clip in clips:
            levels = [int((k + person) % 3 == 0) for k in range(clip.words.count())]
            AnnotationFactory(item=TaskItemFactory(task=task, clip=clip), levels=levels)
    return study


def unzipped(export, folder):
    with export.file.open("rb") as handle, zipfile.ZipFile(handle) as archive:
        archive.extractall(folder)
    return folder


def load_audiofolder(folder, tmp_path, monkeypatch):
    """datasets.load_dataset("audiofolder", data_dir=folder), exactly as the docs say: the audio
    column decodes with torchcodec and FFmpeg's libraries, as `make test` and .ci/run install them."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import datasets

    try:
        import torchcodec.decoders  # noqa: F401 (loads FFmpeg's libraries)
    except (ImportError, OSError, RuntimeError) as error:
        # As for the other system services (tests/conftest.py): skipped here, a failure in CI.
        reason = f"torchcodec cannot decode here ({error}); install FFmpeg's libraries: apt-get install ffmpeg"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return datasets.load_dataset("audiofolder", data_dir=str(folder), cache_dir=str(tmp_path / "hf-cache"))


def wav_samples(data: bytes) -> tuple[np.ndarray, int]:
    """A 16-bit PCM WAV's samples as floats in [-1, 1) (as torchcodec decodes them), and its rate."""
    with wave.open(io.BytesIO(data)) as reader:
        assert reader.getsampwidth() == 2
        frames = np.frombuffer(reader.readframes(reader.getnframes()), dtype="<i2")
        return frames.astype(np.float32) / 32768, reader.getframerate()


def assert_decodes_to(audio, stored_name: str) -> None:
    """The decoded audio of an item is the stored file's samples, at its rate."""
    from django.core.files.storage import default_storage

    with default_storage.open(stored_name) as handle:
        expected, rate = wav_samples(handle.read())
    assert audio["sampling_rate"] == rate
    decoded = np.asarray(audio["array"], dtype=np.float32)
    assert decoded.shape == expected.shape and expected.size > 0
    np.testing.assert_allclose(decoded, expected, atol=1 / 32768)
