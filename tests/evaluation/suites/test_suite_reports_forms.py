"""StressTest and StanceBench end to end: forms imported as researchers do, listeners answering
through the real assignment and submit services, systems' outputs imported by the command, the
report computed by the background job; every figure against a hand count."""

import csv
import io
import json

import pytest
from django.core.management import call_command
from scipy.stats import spearmanr
from statsmodels.stats.proportion import proportion_confint

from annotation.models import Study, TaskItem
from evaluation.models import SuiteReport
from evaluation.reports.suite_charts import suite_charts
from evaluation.services.suite_reports import suite_report_request
from tests.evaluation.suites.fixtures import (
    STRESSTEST_OPTIONS,
    import_stance_study,
    import_stresstest_study,
    stresstest_outputs,
    write_jsonl,
)
from tests.evaluation.test_listening_form_report_page import take_form

pytestmark = pytest.mark.django_db


def go_live(study: Study, *, listeners: int) -> Study:
    items = study.form_items.count()
    Study.objects.filter(pk=study.pk).update(
        status=Study.Status.LIVE, target_annotations=listeners, clips_per_task=items, attention_checks_per_task=0
    )
    study.refresh_from_db()
    return study


def computed(capture, **subject) -> dict:
    with capture(execute=True):
        job = suite_report_request(**subject, resamples=200, seed=7)
    job.refresh_from_db()
    assert job.status == SuiteReport.Status.SUCCEEDED, job.error
    return json.loads(job.result_json)


def wilson(successes: int, trials: int) -> list[float]:
    return [float(bound) for bound in proportion_confint(successes, trials, alpha=0.05, method="wilson")]


# StressTest: 3 items (gold options 0, 1, 2; stressed words 0, 2, 6), 3 listeners, 2 systems.

SSR_CHOICES = [  # listener -> item -> the option chosen
    {"st-001": 0, "st-002": 1, "st-003": 2},  # always right
    {"st-001": 0, "st-002": 1, "st-003": 0},
    {"st-001": 1, "st-002": 1, "st-003": 1},
]
SSD_MARKS = [  # listener -> the words marked on every item, besides (True) or instead of (False) the gold word
    (True, ()),
    (True, (5,)),
    (False, (4,)),
]
GOLD_WORD = {"st-001-ssd": 0, "st-002-ssd": 2, "st-003-ssd": 6}


def stresstest_answer(listener: int):
    def answer(form_item, task_item):
        if form_item.item_type == "single_choice":
            return [], {"choice": SSR_CHOICES[listener][form_item.external_id]}
        with_gold, others = SSD_MARKS[listener]
        marked = set(others) | ({GOLD_WORD[form_item.external_id]} if with_gold else set())
        return [int(index in marked) for index in range(7)], {}

    return answer


BAD_SYSTEM = [
    {"item": "st-001", "answer": "I have no idea"},  # names no option: wrong, and a failure
    {"item": "st-002", "answer": "Option B"},  # a letter label: option 1, right
    {"item": "st-003", "answer": 0},  # wrong
    {"item": "st-001-ssd", "stressed": [1]},  # fp 1, fn 1
    {"item": "st-002-ssd", "stressed": [2, 3]},  # tp 1, fp 1
    # st-003-ssd: no answer -- a failure, predicting no word (fn 1)
]


@pytest.fixture
def stresstest_study(tmp_path):
    study = go_live(import_stresstest_study(tmp_path / "form"), listeners=3)
    for listener in range(3):
        take_form(study, stresstest_answer(listener))
    for name, rows in (("good-slm", stresstest_outputs()), ("bad-slm", BAD_SYSTEM)):
        path = write_jsonl(tmp_path / f"{name}.jsonl", rows)
        call_command(
            "import_system_outputs", str(path), "--suite", "stresstest", "--system", name, "--study", study.slug
        )
    return study


def test_stresstest_systems_and_listeners_on_one_table_match_hand_counts(
    stresstest_study, django_capture_on_commit_callbacks
):
    report = computed(django_capture_on_commit_callbacks, suite="stresstest", study=stresstest_study)
    rows = {row["row"]: row for row in report["table"]["overall"]}

    # Listeners: right 2 + 3 + 1 of 9 answers; majority right on st-001 and st-002, st-003 is a 3-way tie.
    assert rows["humans"]["accuracy"]["successes"] == 6 and rows["humans"]["accuracy"]["trials"] == 9
    assert rows["humans"]["accuracy"]["ci95"] == pytest.approx(wilson(6, 9))
    assert rows["humans"]["majority_vote_accuracy"]["value"] == pytest.approx(2 / 3)
    assert rows["good-slm"]["accuracy"]["value"] == 1.0 and rows["good-slm"]["failures"] == 0
    assert rows["bad-slm"]["accuracy"]["successes"] == 1 and rows["bad-slm"]["failures"] == 1
    assert rows["bad-slm"]["accuracy"]["ci95"] == pytest.approx(wilson(1, 3))

    per_category = {
        category: {row["row"]: row for row in table} for category, table in report["table"]["per_category"].items()
    }
    assert per_category["contrastive"]["humans"]["accuracy"]["value"] == pytest.approx(5 / 6)
    assert per_category["emphatic"]["humans"]["accuracy"]["value"] == pytest.approx(1 / 3)
    assert per_category["contrastive"]["bad-slm"]["accuracy"]["value"] == pytest.approx(1 / 2)
    assert per_category["emphatic"]["good-slm"]["accuracy"]["value"] == 1.0

    bad = report["systems"]["bad-slm"]
    assert bad["ssr"]["failure_reasons"] == {next(iter(bad["ssr"]["failure_reasons"])): 1}
    assert [row["item"] for row in bad["ssr"]["per_item"] if row["failure"]] == ["st-001"]
    # SSD, pooled over words: bad-slm tp 1, fp 2, fn 2; the listeners tp 6, fp 6, fn 3.
    assert bad["ssd"]["pooled"] == pytest.approx(
        {"precision": 1 / 3, "recall": 1 / 3, "f1": 1 / 3, "tp": 1, "fp": 2, "fn": 2}
    )
    assert bad["ssd"]["failures"] == 1
    assert report["systems"]["good-slm"]["ssd"]["pooled"]["f1"] == 1.0
    humans = report["humans"]["ssd"]["pooled"]
    assert (humans["tp"], humans["fp"], humans["fn"]) == (6, 6, 3)
    assert humans["f1"] == pytest.approx(12 / 21)


def test_stresstest_page_and_downloads_show_the_same_figures(
    stresstest_study, admin_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        first = admin_client.get(f"/admin/evaluation/suitereport/stresstest/{stresstest_study.pk}/")
    assert first.status_code == 200
    page = admin_client.get(f"/admin/evaluation/suitereport/stresstest/{stresstest_study.pk}/").content.decode()
    assert "SSR: all shared items" in page and "bad-slm" in page and "0.667" in page
    assert "Answers that could not be read" in page and "st-001" in page
    lines = list(
        csv.DictReader(
            io.StringIO(
                admin_client.get(
                    f"/admin/evaluation/suitereport/stresstest/{stresstest_study.pk}/scores.csv"
                ).content.decode()
            )
        )
    )
    humans = next(
        line
        for line in lines
        if line["table"] == "SSR: all shared items" and line["row"] == "humans" and line["column"] == "accuracy"
    )
    assert float(humans["value"]) == pytest.approx(6 / 9) and humans["n"] == "9"
    body = admin_client.get(f"/admin/evaluation/suitereport/stresstest/{stresstest_study.pk}/scores.json").json()
    assert body["systems"]["good-slm"]["ssr"]["accuracy"]["value"] == 1.0


def test_suite_pages_need_the_view_permission(stresstest_study, client, django_user_model):
    staff = django_user_model.objects.create_user("staff", password="x", is_staff=True)
    client.force_login(staff)
    assert client.get(f"/admin/evaluation/suitereport/stresstest/{stresstest_study.pk}/").status_code == 403
    assert client.get(f"/admin/evaluation/suitereport/stresstest/{stresstest_study.pk}/scores.json").status_code == 403


def test_an_unknown_suite_is_404(stresstest_study, admin_client):
    assert admin_client.get(f"/admin/evaluation/suitereport/nonsense/{stresstest_study.pk}/").status_code == 404


def test_the_report_follows_new_outputs(stresstest_study, tmp_path, django_capture_on_commit_callbacks):
    before = computed(django_capture_on_commit_callbacks, suite="stresstest", study=stresstest_study)
    path = write_jsonl(tmp_path / "fixed.jsonl", [{"item": "st-001", "answer": STRESSTEST_OPTIONS[0]}])
    call_command(
        "import_system_outputs",
        str(path),
        "--suite",
        "stresstest",
        "--system",
        "bad-slm",
        "--study",
        stresstest_study.slug,
        "--replace",
    )
    after = computed(django_capture_on_commit_callbacks, suite="stresstest", study=stresstest_study)
    assert before["systems"]["bad-slm"]["ssr"]["failures"] == 1
    assert after["systems"]["bad-slm"]["ssr"]["failures"] == 2  # st-001 right now; st-002, st-003 unanswered


# StanceBench: 4 warmth items (weak labels P, N, P, N), 4 listeners, 2 judges.

HUMAN_STANCE = {"warm-01": ("P", 0.9), "warm-02": ("N", 0.6), "warm-03": ("P", 0.3), "warm-04": ("N", 0.8)}
CONSENSUS = {"warm-01": 0.9, "warm-02": -0.6, "warm-03": 0.3, "warm-04": -0.8}


def stance_answer(form_item, task_item):
    pole, confidence = HUMAN_STANCE[form_item.external_id]
    return [], {"pole": pole, "confidence": confidence, "pole_order": task_item.presentation["pole_order"]}


def judge(pole, confidence) -> str:
    return json.dumps({"choice": pole, "confidence": confidence, "evidence": ["pitch"]})


CAREFUL_JUDGE = [  # signed: warm-01 0.8, warm-02 -0.2 (orders disagree), warm-03 0.9, warm-04 -0.9
    ("warm-01", "PN", judge("P", 0.9)),
    ("warm-01", "NP", judge("P", 0.7)),
    ("warm-02", "PN", judge("N", 0.6)),
    ("warm-02", "NP", judge("P", 0.2)),
    ("warm-03", "PN", judge("P", 1.0)),
    ("warm-03", "NP", judge("P", 0.8)),
    ("warm-04", "PN", judge("N", 0.9)),
    ("warm-04", "NP", judge("N", 0.9)),
]
SLOPPY_JUDGE = [  # 4 of 8 answers fail: prose, a confidence above 1, and warm-03 never answered
    ("warm-01", "PN", "I think the speaker sounds warm"),
    ("warm-01", "NP", judge("P", 0.7)),
    ("warm-02", "PN", judge("N", 1.4)),
    ("warm-02", "NP", '```json\n{"choice": "N", "confidence": 0.5}\n```'),
    ("warm-04", "PN", judge("N", 0.9)),
    ("warm-04", "NP", judge("P", 0.1)),
]


@pytest.fixture
def stance_study(tmp_path):
    study = go_live(import_stance_study(tmp_path / "form"), listeners=4)
    for _ in range(4):
        take_form(study, stance_answer)
    for name, rows in (("careful-judge", CAREFUL_JUDGE), ("sloppy-judge", SLOPPY_JUDGE)):
        lines = [{"item": item, "order": order, "answer": answer} for item, order, answer in rows]
        path = write_jsonl(tmp_path / f"{name}.jsonl", lines)
        call_command("import_system_outputs", str(path), "--suite", "stance", "--system", name, "--study", study.slug)
    return study


def test_four_listeners_hear_each_stance_item_twice_in_each_pole_order(stance_study):
    orders = {}
    for item in TaskItem.objects.filter(task__participant__study=stance_study).select_related("study_item__form_item"):
        orders.setdefault(item.study_item.form_item.external_id, []).append(item.presentation["pole_order"])
    assert {item: sorted(seen) for item, seen in orders.items()} == {
        item: ["NP", "NP", "PN", "PN"] for item in HUMAN_STANCE
    }


def test_stance_judges_and_listeners_match_hand_counts(stance_study, django_capture_on_commit_callbacks):
    report = computed(django_capture_on_commit_callbacks, suite="stance", study=stance_study)
    rows = {row["row"]: row for row in report["tables"]["per_dimension"]["warmth"]}

    careful = rows["careful-judge"]
    assert careful["failure_rate"] == 0 and careful["disagreement_rate"] == 0.25
    assert careful["auroc"]["value"] == 1.0 and careful["eer"]["value"] == 0.0
    judge_scores = [0.8, -0.2, 0.9, -0.9]
    expected = spearmanr(judge_scores, list(CONSENSUS.values())).statistic
    assert careful["spearman"]["rho"] == pytest.approx(expected) == pytest.approx(0.8)

    sloppy = rows["sloppy-judge"]
    assert sloppy["failure_rate"] == 0.5 and sloppy["disagreement_rate"] == 1.0
    assert sloppy["auroc"]["value"] == 1.0  # warm-01 0.7 above warm-02 -0.5 and warm-04 -0.4
    assert sloppy["spearman"]["shared"] == 3
    assert sloppy["spearman"]["rho"] == pytest.approx(spearmanr([0.7, -0.5, -0.4], [0.9, -0.6, -0.8]).statistic)
    sloppy_scores = report["judges"]["sloppy-judge"]["scores"]["per_dimension"]["warmth"]
    assert sloppy_scores["failures"] == 4 and sloppy_scores["missing_answers"] == 2
    assert sloppy_scores["left_out_of_roc"] == 1  # warm-03: no answer parsed

    humans = rows["humans"]
    assert humans["disagreement_rate"] == 0.0 and humans["auroc"]["value"] == 1.0
    consensus = {row["item"]: row["consensus"] for row in report["humans"]["per_item"]}
    assert consensus == pytest.approx(CONSENSUS)


def test_stance_page_has_a_roc_plot_and_the_failure_reasons(
    stance_study, admin_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.get(f"/admin/evaluation/suitereport/stance/{stance_study.pk}/")
    page = admin_client.get(f"/admin/evaluation/suitereport/stance/{stance_study.pk}/").content.decode()
    assert "ROC against the weak labels: warmth" in page and "<polyline" in page
    assert "Structural failures by reason" in page and "sloppy-judge" in page


def test_a_detector_with_stressed_words_only_is_scored_on_ssd_only(
    stresstest_study, tmp_path, django_capture_on_commit_callbacks
):
    rows = [{"item": f"{item}-ssd", "stressed": [word]} for item, word in (("st-001", 0), ("st-002", 3), ("st-003", 6))]
    path = write_jsonl(tmp_path / "detector.jsonl", rows)
    call_command(
        "import_system_outputs",
        str(path),
        "--suite",
        "stresstest",
        "--system",
        "acoustic #1",
        "--kind",
        "detector",
        "--study",
        stresstest_study.slug,
    )
    report = computed(django_capture_on_commit_callbacks, suite="stresstest", study=stresstest_study)
    detector = report["systems"]["acoustic #1"]
    assert detector["ssr"] is None and "acoustic #1" not in {row["row"] for row in report["table"]["overall"]}
    assert detector["ssd"]["pooled"] == pytest.approx(
        {"precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3, "tp": 2, "fp": 1, "fn": 1}
    )


def test_listeners_alone_are_ranked_against_the_items_weak_labels(tmp_path, django_capture_on_commit_callbacks):
    study = go_live(import_stance_study(tmp_path / "form"), listeners=4)
    for _ in range(4):
        take_form(study, stance_answer)
    report = computed(django_capture_on_commit_callbacks, suite="stance", study=study)
    [humans] = report["tables"]["per_dimension"]["warmth"]
    assert humans["row"] == "humans" and humans["auroc"]["value"] == 1.0 and humans["eer"]["value"] == 0.0
    # A perfect ranking: the curve climbs to (0, 1) before it moves right; the plot draws it.
    assert (humans["roc"]["fpr"][0], humans["roc"]["tpr"][0], humans["roc"]["fpr"][-1]) == (0.0, 0.0, 1.0)
    assert max(tpr for fpr, tpr in zip(humans["roc"]["fpr"], humans["roc"]["tpr"]) if fpr == 0.0) == 1.0
    [chart] = suite_charts(report)
    assert "<title>humans</title></polyline>" in chart


def test_scores_not_yet_computed_show_progress_and_a_download_answers_409(stresstest_study, admin_client):
    page = admin_client.get(f"/admin/evaluation/suitereport/stresstest/{stresstest_study.pk}/").content.decode()
    assert 'id="suite-report-progress"' in page and "waiting for a worker" in page
    job = SuiteReport.objects.get()
    assert f"/admin/evaluation/suitereport/reports/{job.pk}/progress/" in page
    download = admin_client.get(f"/admin/evaluation/suitereport/stresstest/{stresstest_study.pk}/scores.csv")
    assert download.status_code == 409 and download["Retry-After"] == "5"
    assert "The scores: not ready yet" in download.content.decode()
    progress = admin_client.get(f"/admin/evaluation/suitereport/reports/{job.pk}/progress/", HTTP_HX_REQUEST="true")
    assert progress.status_code == 200 and "Scores queued" in progress.content.decode()
