"""The headphone check's results where researchers read them: the study's admin page, the agreement
report (its section, its groups' agreement against reference libraries, its CSV) and the raw
export's participant table (read back with pandas)."""

import io
import json

import krippendorff
import numpy as np
import pandas
import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.models import HeadphoneTrial, Participant, PrerequisiteQuestion, Study
from annotation.participant_names import opaque_annotator_id
from annotation.selectors.headphone_results import HEADPHONE_QUESTION, headphone_results
from evaluation.services.agreement_reports import agreement_report_compute, report_parameters
from tests.annotation.factories import ParticipantFactory
from tests.evaluation.builders import golden_rows, golden_study
from tests.evaluation.export_builders import exported, zip_entries

pytestmark = pytest.mark.django_db

PIDS = [f"{i:024x}" for i in range(1, 7)]
PASSED, FAILED = PIDS[:4], PIDS[4:]  # the sixth is golden_rows' careless annotator
SAID_NO = PIDS[5]


def answered(participant, test: str, attempt: int, right: list[bool]):
    for trial, correct in enumerate(right):
        target = (trial + attempt) % 3
        HeadphoneTrial.objects.create(
            participant=participant,
            test=test,
            attempt=attempt,
            trial=trial,
            target=target,
            answer=target if correct else (target + 1) % 3,
            correct=correct,
        )


@pytest.fixture
def study():
    """golden_study's six annotators, having taken both tests in a study that records the result:
    four passed (one on the second try), two failed; five said they wore headphones. And one
    more participant, screened out by the headphone question before the check."""
    study = golden_study()
    Study.objects.filter(pk=study.pk).update(
        headphone_check=Study.HeadphoneCheck.BOTH, headphone_check_tries=2, headphone_check_screens_out=False
    )
    study.refresh_from_db()
    PrerequisiteQuestion.objects.create(
        study=study, text=HEADPHONE_QUESTION, choices=["Yes", "No"], accepted=["Yes", "No"]
    )
    for index, participant in enumerate(Participant.objects.filter(study=study).order_by("prolific_pid")):
        pid = participant.prolific_pid
        participant.screening_answers = {HEADPHONE_QUESTION: "No" if pid == SAID_NO else "Yes"}
        participant.headphone_level_set_at = participant.created_at
        participant.headphone_check_passed = pid in PASSED
        participant.save()
        if pid in PASSED:
            if index == 3:  # the second try
                answered(participant, "huggins", 0, [True, True, False, True, True, True])
            answered(participant, "huggins", 1 if index == 3 else 0, [True] * 6)
            answered(participant, "antiphase", 0, [True, True, True, True, False, True])
        else:
            answered(participant, "huggins", 0, [True, False, False, True, False, False])
            answered(participant, "huggins", 1, [False, True, False, False, True, False])
    ParticipantFactory(
        study=study, prolific_pid="f" * 24, screened_out=True, screening_answers={HEADPHONE_QUESTION: "No"}
    )
    return study


def test_the_summary_counts_who_took_passed_and_failed_each_test_and_on_which_trial(study):
    results = headphone_results(study=study)

    assert results["participants"] == {"took": 6, "passed": 4, "failed": 2, "in_progress": 0}
    huggins, antiphase = results["tests"]
    assert (huggins["test"], huggins["pass_mark"], huggins["took"], huggins["passed"], huggins["failed"]) == (
        "huggins",
        6,
        6,
        4,
        2,
    )
    assert huggins["passed_on_try"] == [3, 1]
    assert huggins["first_try_scores"] == [0, 0, 2, 0, 0, 1, 3]  # 2, 2 (the failures), 5, 6, 6, 6 right
    # Nine tries in all (five by those who passed, two each by those who failed): trial 1 was
    # missed in the failures' second tries, trial 2 in their first, trial 3 in five tries.
    assert [(t["correct"], t["answered"]) for t in huggins["by_trial"]][:3] == [(7, 9), (7, 9), (4, 9)]
    assert (antiphase["took"], antiphase["passed"], antiphase["failed"], antiphase["in_progress"]) == (4, 4, 0, 0)
    assert results["self_report"] == {
        "question": HEADPHONE_QUESTION,
        "rows": [
            {
                "answer": "Yes",
                "accepted": True,
                "participants": 5,
                "passed": 4,
                "failed": 1,
                "in_progress": 0,
                "not_checked": 0,
            },
            {
                "answer": "No",
                "accepted": True,
                "participants": 2,
                "passed": 0,
                "failed": 1,
                "in_progress": 0,
                "not_checked": 1,
            },
        ],
    }


def test_the_agreement_report_compares_the_groups_and_matches_the_reference_library(study):
    parameters = report_parameters(study=study, subsample=6, resamples=200)
    report = json.loads(agreement_report_compute(study=study, parameters=parameters))
    section = report["headphone_check"]

    assert section["results"]["participants"] == {"took": 6, "passed": 4, "failed": 2, "in_progress": 0}
    groups = {group["group"]: group for group in section["agreement_by_group"]}
    assert list(groups) == ["all", "passed", "failed", "self_report:Yes", "self_report:No"]
    assert [groups[name]["agreement"]["annotators"] for name in groups] == [6, 4, 2, 5, 1]

    # Each group's alpha is Krippendorff's alpha of its own annotations (the `krippendorff` package).
    clips, annotations, _ = golden_rows()
    for name, members in (("passed", PASSED), ("failed", FAILED), ("all", PIDS)):
        units = [(key, word) for key, (words, *_rest) in sorted(clips.items()) for word in range(words)]
        column = {unit: index for index, unit in enumerate(units)}
        matrix = np.full((len(members), len(units)), np.nan)
        for key, pid, levels, _mismatch, _seconds in annotations:
            if pid in members:
                for word, level in enumerate(levels):
                    matrix[members.index(pid), column[(key, word)]] = level
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=[0, 1, 2])
        assert groups[name]["agreement"]["krippendorff"]["ordinal"]["value"] == pytest.approx(expected, abs=1e-9)

    # The mean leave-one-out kappa is the annotator table's kappas averaged over the group.
    kappas = {row["annotator"]: row["kappa"] for row in report["annotators"]["rows"]}
    passed = [kappas[opaque_annotator_id(study.slug, pid)] for pid in PASSED]
    with_others = groups["passed"]["kappa_with_others"]
    assert with_others["mean"] == pytest.approx(np.mean(passed)) and with_others["annotators"] == 4
    assert with_others["ci95"] is None and "too few annotators" in with_others["undefined"]
    assert groups["failed"]["kappa_with_others"]["mean"] == pytest.approx(
        np.mean([kappas[opaque_annotator_id(study.slug, pid)] for pid in FAILED])
    )
    # The careless annotator failed: those who passed agree better than those who failed.
    alpha = {name: groups[name]["agreement"]["krippendorff"]["ordinal"]["value"] for name in ("passed", "failed")}
    assert alpha["passed"] > alpha["failed"]


def test_a_study_without_the_check_gets_the_report_it_always_had(study):
    Study.objects.filter(pk=study.pk).update(headphone_check=Study.HeadphoneCheck.NONE)
    HeadphoneTrial.objects.all().delete()
    study.refresh_from_db()
    report = json.loads(agreement_report_compute(study=study, parameters=report_parameters(study=study, resamples=50)))
    assert "headphone_check" not in report


def test_the_report_page_and_csv_show_the_check(client, study, django_capture_on_commit_callbacks):
    client.force_login(User.objects.create_superuser("boss", password="x"))
    page = reverse("admin:evaluation_agreementreport_study", args=[study.pk])
    query = {"language": "", "subsample": 6, "seed": 0, "resamples": 100, "min_kappa": 0.1, "min_attention": 1.0}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(page, {**query, "min_time_ratio": 1.0})
    html = client.get(response["Location"]).content.decode()
    assert 'id="headphone-check"' in html
    assert "Took the check: 6 · passed: 4 · failed: 2 · still at it: 0" in html
    assert "passed the check" in html and "answered “No” to the headphone question" in html
    assert "<th>headphone check</th><td>failed the check</td>" in html  # the groups' rows in the agreement tables

    report = study.agreement_reports.get()
    rows = list(
        pandas.read_csv(
            io.StringIO(client.get(reverse("admin:evaluation_agreementreport_csv", args=[report.pk])).content.decode())
        ).itertuples()
    )
    headphone = [row for row in rows if row.section == "headphone_check"]
    assert any(row.measure == "passed" and row.group == "huggins" and row.value == 4 for row in headphone)
    assert any(row.measure == "mean_leave_one_out_kappa" and row.group == "passed the check" for row in headphone)
    assert any(row.dimension == "headphone check" and row.measure == "fleiss" for row in rows)


def test_the_study_page_shows_the_settings_the_chance_and_the_results(client, study):
    client.force_login(User.objects.create_superuser("boss", password="x"))
    html = client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    assert "Headphone check" in html and 'name="headphone_check"' in html
    assert "Huggins pitch: 6 of 6 right in 2 tries: 0.27 %" in html  # 1 - (1 - 1/729)^2
    assert "antiphase: 5 of 6 right in 2 tries: 3.5 %" in html
    assert "Took the check: 6 · passed: 4 · failed: 2 · still at it: 0" in html
    assert "No (screened out by the question)" not in html  # the question accepts both answers here


def test_a_pass_mark_above_the_trials_is_refused_on_the_study_page(client, study):
    from django.forms.models import model_to_dict

    client.force_login(User.objects.create_superuser("boss", password="x"))
    url = reverse("admin:annotation_study_change", args=[study.pk])
    page = client.get(url)
    form = page.context["adminform"].form
    data = {
        key: value
        for key, value in model_to_dict(study, fields=form.fields).items()
        if value is not None and not isinstance(value, list | dict)
    }
    for name in ("selection", "example_levels"):
        data[name] = json.dumps(getattr(study, name))
    for prefix in ("prerequisites", "attention_checks"):  # the inlines left as they are
        data |= {f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0}
    response = client.post(url, {**data, "headphone_check_trials": 4, "huggins_pass_mark": 5})
    assert response.status_code == 200
    assert "The Huggins pitch test has 4 trials: at most that many can be right." in response.content.decode()


def test_the_raw_export_has_a_participant_table_with_each_result(study, django_capture_on_commit_callbacks):
    export = exported(django_capture_on_commit_callbacks, format="raw", study=study)
    entries = zip_entries(export)
    assert sorted(entries) == ["README.md", "annotations.csv", "participants.csv"]
    table = pandas.read_csv(io.BytesIO(entries["participants.csv"]), dtype=str, keep_default_na=False)
    assert len(table) == 7 and set(table["headphone_check"]) == {"both"}
    by_id = table.set_index("annotator")
    first = by_id.loc[opaque_annotator_id(study.slug, PIDS[3])]
    assert first["headphone_check_passed"] == "1" and first["huggins_scores"] == "5/6;6/6"
    assert first["antiphase_scores"] == "5/6" and first["headphone_self_report"] == "Yes"
    trials = json.loads(first["headphone_trials"])
    assert len(trials) == 18 and trials[2] == {
        "test": "huggins",
        "try": 1,
        "trial": 3,
        "target": 3,
        "answer": 1,
        "correct": 0,
    }
    failed = by_id.loc[opaque_annotator_id(study.slug, SAID_NO)]
    assert failed["headphone_check_passed"] == "0" and failed["headphone_self_report"] == "No"
    assert failed["huggins_scores"] == "2/6;2/6" and failed["antiphase_scores"] == ""
    never = table[table["headphone_level_set"] == "0"].iloc[0]
    assert never["screened_out"] == "1" and never["headphone_check_passed"] == "" and never["headphone_trials"] == "[]"
    assert PIDS[0] not in entries["participants.csv"].decode()
    assert "`participants.csv`" in entries["README.md"].decode()
