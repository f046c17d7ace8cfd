"""The Parquet export: one row per clip with its words as lists and its audio's bytes embedded,
read by `datasets.load_dataset("parquet", ...)` and by pandas with no audio codec installed, and
offered by the admin, the API and the command like the other formats."""

import io
import sys
import zipfile

import numpy as np
import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Clip
from evaluation.models import DatasetExport
from evaluation.selectors.label_sets import label_set_rows
from tests.api.callers import staff_with, token_client
from tests.evaluation.export_builders import audio_study, exported, final_label_set, unzipped, wav_samples

pytestmark = pytest.mark.django_db
API_PERMS = ("evaluation.add_datasetexport", "evaluation.view_datasetexport", "evaluation.view_labelset")


@pytest.fixture
def label_set(corpus_folder, django_capture_on_commit_callbacks):
    return final_label_set(audio_study(corpus_folder), django_capture_on_commit_callbacks, name="voices")


@pytest.fixture
def no_codec(monkeypatch):
    """torchcodec cannot be imported: what a reader without any audio codec has."""
    monkeypatch.setitem(sys.modules, "torchcodec", None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def stored_audio(clip_ids) -> dict[str, bytes]:
    clips = Clip.objects.filter(external_id__in=clip_ids)
    return {clip.external_id: default_storage.open(clip.model_audio.name).read() for clip in clips}


def test_datasets_loads_the_parquet_export_without_a_codec(
    label_set, django_capture_on_commit_callbacks, tmp_path, no_codec
):
    import datasets

    export = exported(django_capture_on_commit_callbacks, format="parquet", label_set=label_set)
    folder = unzipped(export, tmp_path / "export")
    rows = {row["clip_id"]: row for row in label_set_rows(label_set_id=label_set.pk)}
    audio = stored_audio(rows)

    loaded = datasets.load_dataset("parquet", data_dir=str(folder / "data"), cache_dir=str(tmp_path / "hf"))

    seen = []
    for split, dataset in loaded.items():
        for item in dataset:
            row = rows[item["clip_id"]]
            seen.append(item["clip_id"])
            assert row["split"] == split
            for key in ("language", "variety", "speaker", "emotion", "arousal", "study", "duration"):
                assert item[key] == row[key], key
            assert item["words"] == [w["text"] for w in row["words"]]
            assert item["binary"] == [int(w["binary"]) for w in row["words"]]
            assert item["scalar"] == [w["scalar"] for w in row["words"]]
            assert item["start"] == [w["start"] for w in row["words"]]  # None where the clip has no times
            assert item["annotators"] == row["annotators"] and len(item["annotators"]) == 3
            assert item["levels"] == [w["levels"] for w in row["words"]]
            assert item["scale_step"] == row["scale_step"]
            assert item["audio"]["bytes"] == audio[item["clip_id"]]
            samples, rate = wav_samples(item["audio"]["bytes"])
            assert rate == 16000 and samples.size > 0
    assert sorted(seen) == sorted(rows)
    assert "torchcodec" not in sys.modules or sys.modules["torchcodec"] is None


def test_pandas_reads_the_parquet_export(label_set, django_capture_on_commit_callbacks, tmp_path, no_codec):
    import pandas as pd

    export = exported(django_capture_on_commit_callbacks, format="parquet", label_set=label_set)
    folder = unzipped(export, tmp_path / "export")
    rows = {row["clip_id"]: row for row in label_set_rows(label_set_id=label_set.pk)}
    audio = stored_audio(rows)

    frames = [pd.read_parquet(path) for path in sorted((folder / "data").glob("*.parquet"))]
    table = pd.concat(frames, ignore_index=True)

    assert sorted(table["clip_id"]) == sorted(rows)
    for _, item in table.iterrows():
        assert item["audio"]["bytes"] == audio[item["clip_id"]]
        assert list(item["words"]) == [w["text"] for w in rows[item["clip_id"]]["words"]]
        assert np.array_equal(np.stack(item["levels"]), [w["levels"] for w in rows[item["clip_id"]]["words"]])
    card = zipfile.ZipFile(io.BytesIO(export.file.open("rb").read())).read("README.md").decode()
    assert 'datasets.load_dataset("parquet", data_dir="<this folder>/data")' in card


def test_the_admin_api_and_command_offer_parquet(
    label_set, client, admin_user, django_capture_on_commit_callbacks, tmp_path
):
    client.force_login(admin_user)
    page = client.get(reverse("admin:evaluation_labelset_change", args=[label_set.pk])).content.decode()
    assert '<option value="parquet">' in page
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("admin:evaluation_labelset_export", args=[label_set.pk]), {"format": "parquet"})
    assert DatasetExport.objects.get().format == "parquet"

    api = token_client(staff_with(*API_PERMS))
    response = api.post("/api/v1/dataset-exports/", {"format": "parquet", "label_set": label_set.pk}, format="json")
    assert response.status_code in (200, 202), response.content

    target = tmp_path / "voices.zip"
    call_command("labelset_export", "voices", "--format", "parquet", "--output", str(target), stdout=io.StringIO())
    with zipfile.ZipFile(target) as archive:
        assert {"README.md", "data/train.parquet"} <= set(archive.namelist())
