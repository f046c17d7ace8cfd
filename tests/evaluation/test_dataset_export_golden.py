"""The JSONL export of the golden study's final set is byte-identical to the committed files, on
SQLite and on PostgreSQL (the suite runs on both: README, "Tests"), whatever order the rows were
written in: so the same set gives the same zip on either database.

The code version recorded at finalizing (the git commit) is set to a fixed text first; it is the
only part of the zip that differs between checkouts. After an intended change of the export, the
label set or the agreement summary, regenerate with
    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/evaluation/test_dataset_export_golden.py
and read the diff.
"""

import hashlib
import os
from pathlib import Path

import pytest
from django.db import connection

from evaluation.models import LabelSet
from tests.evaluation.builders import golden_study
from tests.evaluation.export_builders import exported, final_label_set, zip_entries

pytestmark = pytest.mark.django_db
GOLDEN = Path(__file__).parent / "golden" / "labelset_jsonl"


@pytest.mark.parametrize("shuffle_seed", [None, 3])
def test_the_jsonl_export_is_the_committed_golden_zip(shuffle_seed, django_capture_on_commit_callbacks):
    # The study's target (6) as the subsample, the default before issue 33 made it every usable
    # annotation: pinned, so that the golden files still cover the subsample and stay the same.
    study = golden_study(shuffle_seed=shuffle_seed)
    label_set = final_label_set(study, django_capture_on_commit_callbacks, subsample=6)
    LabelSet.objects.filter(pk=label_set.pk).update(code_version="golden")
    label_set.refresh_from_db()

    export = exported(django_capture_on_commit_callbacks, format="jsonl", label_set=label_set)
    entries = zip_entries(export)

    if os.environ.get("UPDATE_GOLDEN") and shuffle_seed is None:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for name, data in entries.items():
            (GOLDEN / name).write_bytes(data)
        (GOLDEN / "zip.sha256").write_text(export.sha256 + "\n")
    for name, data in entries.items():  # entry by entry first: a readable diff
        expected = (GOLDEN / name).read_bytes()
        assert data == expected, f"{name} on {connection.vendor} differs from golden/labelset_jsonl/{name}"
    assert sorted(entries) == sorted(path.name for path in GOLDEN.iterdir() if path.name != "zip.sha256")
    # Then the whole zip: entries, order, timestamps and compression (zlib's default level).
    assert export.sha256 == (GOLDEN / "zip.sha256").read_text().strip(), (
        f"the zip on {connection.vendor} has the golden entries but other bytes "
        f"(sha256 {export.sha256[:12]}; another zlib?)"
    )
    assert hashlib.sha256(entries["clips.jsonl"]).hexdigest() == label_set.checksum
