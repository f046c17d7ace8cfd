"""manage.py agreement_report: the same numbers as the report page."""

import io

import pytest
from django.core.management import CommandError, call_command

from annotation.participant_names import opaque_annotator_id
from evaluation.models import AgreementReport
from evaluation.services.agreement_reports import agreement_report_compute, agreement_report_request, report_parameters
from tests.annotation.factories import StudyFactory
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command("agreement_report", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_prints_the_tables_and_ends_with_a_summary_line(tmp_path):
    golden_study()

    output = run("golden", "--resamples", "100", "--csv", str(tmp_path / "r.csv"))

    lines = output.strip().splitlines()
    assert lines[0] == "Study golden"
    assert any(line.startswith("pooled ") for line in lines)
    assert any(line.startswith("language de") for line in lines)
    assert any(line.startswith("emotion calm") for line in lines)
    # the opaque id of Prolific id 000000000000000000000006, as in the study's label sets
    assert f"annotators flagged: 1 ({opaque_annotator_id('golden', '000000000000000000000006')})" in output
    assert lines[-1].startswith("golden: 12 clips, 83 words; Cohen ")  # every usable annotation by default
    assert "Fleiss 0." in lines[-1] and "alpha ordinal 0." in lines[-1] and lines[-1].endswith("1 flagged")
    assert (tmp_path / "r.csv").read_text().startswith("section,dimension,group,measure")


def test_the_json_is_byte_for_byte_the_report_pages(tmp_path, django_capture_on_commit_callbacks):
    study = golden_study()
    parameters = report_parameters(study=study, seed=4, resamples=150, exclude_flagged=True)
    with django_capture_on_commit_callbacks(execute=True):
        stored = agreement_report_request(study=study, parameters=parameters)

    run("golden", "--seed", "4", "--resamples", "150", "--exclude-flagged", "--json", str(tmp_path / "r.json"))

    written = (tmp_path / "r.json").read_text()
    assert written == AgreementReport.objects.get(pk=stored.pk).result_json
    assert written == agreement_report_compute(study=study, parameters=parameters)
    assert '"excluded": [\n      "a-0494357359c78f71"\n    ]' in written  # Prolific id ...0006


def test_options_change_the_parameters(tmp_path):
    golden_study()

    run(
        "golden",
        "--language",
        "de",
        "--subsample",
        "0",
        "--resamples",
        "0",
        "--min-kappa",
        "0.9",
        "--max-marked-share",
        "0.5",
        "--json",
        str(tmp_path / "r.json"),
    )

    text = (tmp_path / "r.json").read_text()
    assert '"language": "de"' in text and '"subsample": null' in text and '"min_kappa": 0.9' in text
    assert '"max_marked_share": 0.5' in text and '"resamples": 0' in text


def test_an_unknown_study_or_bad_subsample_is_an_error():
    golden_study()
    with pytest.raises(CommandError, match="no study with slug 'nope'"):
        run("nope")
    with pytest.raises(CommandError, match="at least 2"):
        run("golden", "--subsample", "1")


def test_a_listening_form_study_is_refused():
    StudyFactory(slug="quiz", kind="form")

    with pytest.raises(CommandError, match="not an emphasis study"):
        run("quiz")
