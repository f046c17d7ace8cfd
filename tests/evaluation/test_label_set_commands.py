"""labelset_create and labelset_finalize, for scripts and CI."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import LabelSet
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_builds_in_process_and_finalize_freezes(tmp_path):
    golden_study()
    arousal = tmp_path / "arousal.json"
    arousal.write_text(json.dumps({"high": ["angry", "happy"], "low": ["calm"]}))

    out = run("labelset_create", "mmee", "--study", "golden", "--resamples", "10", "--arousal", str(arousal))

    label_set = LabelSet.objects.get(name="mmee")
    assert (label_set.version, label_set.status, label_set.lifecycle) == (1, "succeeded", "draft")
    assert out.splitlines()[-1].startswith("label set mmee v1 (draft): 12 clips,")  # every usable annotation
    assert set(label_set.clips.values_list("arousal", flat=True)) == {"high", "low"}

    out = run("labelset_finalize", "mmee")
    label_set.refresh_from_db()
    assert label_set.lifecycle == "final" and f"checksum {label_set.checksum}" in out

    run("labelset_create", "mmee", "--study", "golden", "--resamples", "0", "--subsample", "6", "--finalize")
    newer = LabelSet.objects.get(name="mmee", version=2)
    assert newer.lifecycle == "final" and newer.summary["clips"] == 10  # a subsample of 6: short clips go


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--study", "nope"], "no study with slug 'nope'"),
        (["--study", "golden", "--proportions", "0.8,0.2"], "three non-negative shares"),
        (["--study", "golden", "--proportions", "a,b,c"], "expected three numbers"),
    ],
)
def test_bad_arguments_name_the_problem(args, message):
    golden_study()
    with pytest.raises(CommandError, match=message):
        run("labelset_create", "x", *args)


def test_finalize_names_what_is_missing():
    with pytest.raises(CommandError, match="no label set named 'ghost' with version 3"):
        run("labelset_finalize", "ghost", "--set-version", "3")
