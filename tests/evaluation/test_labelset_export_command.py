"""manage.py labelset_export: builds the export in this process and copies the zip out."""

import hashlib
import zipfile
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import DatasetExport
from tests.evaluation.builders import golden_study
from tests.evaluation.export_builders import final_label_set

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command("labelset_export", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def study():
    return golden_study()


def test_exports_the_newest_version_into_a_file_and_says_so_in_one_line(
    study, django_capture_on_commit_callbacks, tmp_path
):
    final_label_set(study, django_capture_on_commit_callbacks)
    newest = final_label_set(study, django_capture_on_commit_callbacks)
    target = tmp_path / "labels.zip"

    output = run("golden labels", "--format", "jsonl", "--output", str(target))

    export = DatasetExport.objects.get()
    assert export.label_set == newest and export.created_by is None
    assert target.read_bytes() == export.file.open("rb").read()
    assert hashlib.sha256(target.read_bytes()).hexdigest() == export.sha256
    assert output.count("\n") == 1 and f"sha256 {export.sha256}" in output and str(target) in output
    with zipfile.ZipFile(target) as archive:
        assert sorted(archive.namelist()) == ["README.md", "clips.jsonl", "words.jsonl"]

    again = run("golden labels", "--set-version", "2", "--format", "jsonl", "--output", str(tmp_path))
    assert "the same as an earlier export" in again and (tmp_path / "golden-labels-v2-jsonl.zip").exists()
    assert DatasetExport.objects.count() == 1


def test_raw_export_of_a_study(study, tmp_path):
    output = run("--format", "raw", "--study", "golden", "--prolific-ids", "--output", str(tmp_path))

    assert (tmp_path / "golden-raw-prolific-ids.zip").exists() and "golden-raw-prolific-ids.zip" in output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["golden labels", "--format", "jsonl"], "is a draft: only a final"),
        (["nothing", "--format", "csv"], "no label set named 'nothing'"),
        (["--format", "csv"], "exports a label set: give its NAME"),
        (["--format", "raw"], "--format raw needs --study SLUG"),
        (["golden labels", "--format", "raw", "--study", "golden"], "not a label set"),
        (["--format", "raw", "--study", "nope"], "no study with slug 'nope'"),
        (["golden labels", "--format", "csv", "--prolific-ids"], "for --format raw only"),
    ],
)
def test_refusals(study, tmp_path, args, message):
    from evaluation.services.label_sets import label_set_create, label_set_default_parameters

    label_set_create(name="golden labels", studies=[study], parameters=label_set_default_parameters(studies=[study]))

    with pytest.raises(CommandError, match=message):
        run(*args, "--output", str(tmp_path / "x.zip"))
