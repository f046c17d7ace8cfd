"""Every admin action button, clicked in headless Chromium as a researcher clicks it.

Each test logs in to the admin, finds the button by its visible text, clicks it, and checks what
the page then says and what the database holds. (The tests that post to the action URLs directly,
next to each admin, stay: they check permissions; these check that the button reaches the URL.)
"""

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from playwright.sync_api import expect

from annotation.models import Participant, Study
from evaluation.models import DatasetExport, LabelSet
from evaluation.services.label_sets import label_set_build, label_set_create, label_set_default_parameters
from modelzoo.models import BenchmarkRun
from tests.annotation.factories import ParticipantFactory, StudyFactory, TaskFactory
from tests.annotation.study_helpers import live_study
from tests.evaluation.builders import golden_study
from tests.modelzoo.builders import final_label_set
from tests.prolific.test_client import prolific  # noqa: F401 (the contract fake of Prolific, a fixture)
from tests.prolific_fake.submissions import took_part

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "a long secret password"


@pytest.fixture
def admin_page(page, live_server, settings):
    """A page logged in to the admin as a superuser, through the login form."""
    settings.DEBUG = True  # static files (htmx, the admin's CSS) from the app folders
    User.objects.create_superuser("researcher", "researcher@example.com", PASSWORD)
    page.goto(f"{live_server.url}{reverse('admin:login')}")
    page.get_by_label("Username").fill("researcher")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_selector("#user-tools")
    return page


def open_admin(page, live_server, name: str, *args) -> None:
    page.goto(f"{live_server.url}{reverse(name, args=args)}")


def draft_label_set() -> LabelSet:
    study = golden_study()
    parameters = label_set_default_parameters(studies=[study], resamples=20)
    label_set = label_set_create(name="golden labels", studies=[study], parameters=parameters, enqueue=False)
    label_set_build(label_set_id=label_set.pk)
    return LabelSet.objects.get(pk=label_set.pk)


def success_message(page) -> str:
    return page.locator("ul.messagelist li.success").inner_text()


# --- label sets ---------------------------------------------------------------------------------


def test_finalize_freezes_a_draft_label_set(admin_page, live_server):
    label_set = draft_label_set()
    open_admin(admin_page, live_server, "admin:evaluation_labelset_change", label_set.pk)

    admin_page.get_by_role("button", name="Finalize (freeze for good)").click()

    assert "finalized: its rows are frozen" in success_message(admin_page)
    assert "golden labels v1: final" in admin_page.inner_text("#content")
    assert LabelSet.objects.get(pk=label_set.pk).lifecycle == LabelSet.Lifecycle.FINAL
    assert LabelSet.objects.get(pk=label_set.pk).finalized_by.username == "researcher"


def test_archive_retires_a_final_label_set(admin_page, live_server):
    label_set = final_label_set([golden_study()], name="golden labels")
    open_admin(admin_page, live_server, "admin:evaluation_labelset_change", label_set.pk)

    admin_page.get_by_role("button", name="Archive").click()

    assert "archived" in success_message(admin_page)
    assert LabelSet.objects.get(pk=label_set.pk).lifecycle == LabelSet.Lifecycle.ARCHIVED


def test_export_builds_the_chosen_format_and_offers_its_download(admin_page, live_server):
    label_set = final_label_set([golden_study()], name="golden labels")
    open_admin(admin_page, live_server, "admin:evaluation_labelset_change", label_set.pk)

    admin_page.get_by_label("Export as").select_option(label="CSV (rows per word and per clip)")
    admin_page.get_by_role("button", name="Export", exact=True).click()

    export = DatasetExport.objects.get()
    assert (export.format, export.status) == ("csv", DatasetExport.Status.SUCCEEDED)
    expect(admin_page.get_by_role("link", name=f"Download {export.file_name}")).to_be_visible()  # waits for the page


def test_launch_benchmark_from_the_label_set_list(admin_page, live_server, corpus_folder):
    pytest.importorskip("parselmouth")
    from tests.modelzoo.builders import tiny_label_set

    label_set = tiny_label_set(corpus_folder)
    open_admin(admin_page, live_server, "admin:evaluation_labelset_changelist")
    admin_page.get_by_role("row", name=str(label_set)).get_by_role("checkbox").check()
    admin_page.get_by_label("Action:").select_option(label="Launch a benchmark")
    admin_page.get_by_role("button", name="Go").click()
    admin_page.get_by_label("Detector").select_option("acoustic")
    admin_page.get_by_label("Setting").select_option("multilingual")
    admin_page.get_by_role("button", name="Launch").click()

    run = BenchmarkRun.objects.get()
    assert run.label_set == label_set and run.status == BenchmarkRun.Status.SUCCEEDED, run.error
    assert "1 run(s) queued for a GPU worker" in admin_page.locator("ul.messagelist").inner_text()
    expect(admin_page.get_by_role("heading", name="Test scores")).to_be_visible()


# --- benchmark runs ------------------------------------------------------------------------------


def test_cancel_stops_a_queued_benchmark_run(admin_page, live_server, corpus_folder, monkeypatch):
    pytest.importorskip("parselmouth")
    from modelzoo.plans import Plan
    from modelzoo.services.benchmark_runs import benchmark_runs_launch
    from tests.modelzoo.builders import tiny_label_set

    label_set = tiny_label_set(corpus_folder)
    monkeypatch.setattr("annotation.shared.jobs._send", lambda model, job_id: None)  # no worker takes it
    [run] = benchmark_runs_launch(
        label_set=label_set, detector="acoustic", label_mode="binary", plan=Plan("multilingual")
    )
    open_admin(admin_page, live_server, "admin:modelzoo_benchmarkrun_change", run.pk)

    admin_page.get_by_role("button", name="Cancel this run").click()

    assert f"Run {run.pk}: cancel requested. It is cancelled." in success_message(admin_page)
    assert "Cancelled before it finished." in admin_page.inner_text("#content")
    assert BenchmarkRun.objects.get(pk=run.pk).cancelled


# --- studies and participants --------------------------------------------------------------------


def test_set_live_from_the_study_list(admin_page, live_server):
    study = live_study(status=Study.Status.DRAFT, consent_text="I agree to take part.")
    open_admin(admin_page, live_server, "admin:annotation_study_changelist")

    admin_page.get_by_role("row", name=study.name).get_by_role("checkbox").check()
    admin_page.get_by_label("Action:").select_option(label="Set live (hand out work)")
    admin_page.get_by_role("button", name="Go").click()

    assert f"Set live: {study.name}." in success_message(admin_page)
    assert Study.objects.get(pk=study.pk).status == Study.Status.LIVE


def test_set_live_pause_and_close_from_the_study_page(admin_page, live_server):
    study = live_study(status=Study.Status.DRAFT, consent_text="")
    open_admin(admin_page, live_server, "admin:annotation_study_change", study.pk)
    assert "Set live is refused: it has no consent text" in admin_page.inner_text("#content")

    admin_page.get_by_role("button", name="Set live (hand out work)").click()

    warning = admin_page.locator("ul.messagelist li.warning").inner_text()
    assert "Not set live: " in warning and "it has no consent text" in warning
    Study.objects.filter(pk=study.pk).update(consent_text="I agree to take part.")
    admin_page.reload()
    admin_page.get_by_role("button", name="Set live (hand out work)").click()
    assert f"Set live: {study.name}." in success_message(admin_page)
    admin_page.get_by_role("button", name="Pause (stop handing out work)").click()
    assert f"Set paused: {study.name}." in success_message(admin_page)
    expect(admin_page.get_by_role("button", name="Pause (stop handing out work)")).to_have_count(0)  # it is paused
    admin_page.get_by_role("button", name="Close", exact=True).click()
    assert f"Set closed: {study.name}." in success_message(admin_page)
    assert Study.objects.get(pk=study.pk).status == Study.Status.CLOSED


def test_a_studys_raw_export_from_its_page(admin_page, live_server):
    study = golden_study()
    open_admin(admin_page, live_server, "admin:annotation_study_change", study.pk)

    admin_page.get_by_label("Prolific ids").select_option(label="opaque ids only")
    admin_page.get_by_role("button", name="Export raw annotations").click()

    export = DatasetExport.objects.get()
    assert (export.format, export.study_id, export.include_prolific_ids) == ("raw", study.pk, False)
    expect(admin_page.get_by_role("link", name=f"Download {export.file_name}")).to_be_visible()


def test_the_corpus_page_makes_studies_of_its_clips(admin_page, live_server):
    from tests.annotation.factories import ClipFactory

    study = live_study(status=Study.Status.DRAFT)
    corpus = study.corpus
    ClipFactory(corpus=corpus, language="de", transcript="eins zwei", duration=2.0)
    open_admin(admin_page, live_server, "admin:annotation_corpus_change", corpus.pk)

    admin_page.get_by_role("button", name="One draft study per language").click()
    assert f"{corpus.name}: created" in success_message(admin_page).lower()
    assert Study.objects.filter(corpus=corpus).count() > 1
    admin_page.get_by_role("link", name="Create a study of this corpus").click()
    assert admin_page.get_by_label("Corpus").input_value() == str(corpus.pk)


def test_a_final_label_sets_page_launches_a_benchmark(admin_page, live_server):
    label_set = final_label_set([golden_study()], name="golden labels")
    open_admin(admin_page, live_server, "admin:evaluation_labelset_change", label_set.pk)

    admin_page.get_by_role("link", name="Launch a benchmark").click()

    assert admin_page.locator("#id_label_set").input_value() == str(label_set.pk)


def test_topups_open_the_missing_places(admin_page, live_server):
    from tests.annotation.test_topups import claim, complete, make_study

    study = make_study(places=2)
    complete(claim(study))
    complete(claim(study))
    open_admin(admin_page, live_server, "admin:annotation_study_change", study.pk)

    admin_page.get_by_role("link", name="Top-ups").click()
    admin_page.get_by_role("button", name="Open 2 places").click()

    assert "Opened 2 place(s): places 2 -> 4." in success_message(admin_page)
    assert Study.objects.get(pk=study.pk).places == 4


def test_decisions_are_made_and_sent_to_prolific_by_clicking(admin_page, live_server, prolific):  # noqa: F811
    study = StudyFactory()
    participant = ParticipantFactory(study=study)
    TaskFactory(participant=participant)  # given a task: the review lists it for a decision
    took_part(prolific, participant)
    open_admin(admin_page, live_server, "admin:annotation_participant_review", study.pk)

    admin_page.get_by_role("checkbox", name=re.compile("^select ")).check()
    admin_page.get_by_role("button", name="Approve selected").click()
    assert Participant.objects.get(pk=participant.pk).decision == Participant.Decision.APPROVED
    admin_page.get_by_role("button", name="Send 1 decision to Prolific").click()

    admin_page.wait_for_selector(f"#prolific-send >> text=Sent to Prolific: {participant.prolific_pid}.")
    assert Participant.objects.get(pk=participant.pk).decision_sent_at is not None


def test_the_study_page_leads_to_its_agreement_report_and_its_review(admin_page, live_server):
    study = live_study()
    open_admin(admin_page, live_server, "admin:annotation_study_change", study.pk)

    admin_page.get_by_role("link", name="Agreement report", exact=True).click()
    expect(admin_page.get_by_role("heading", name=f"Agreement report: {study}")).to_be_visible()
    admin_page.go_back()
    admin_page.get_by_role("link", name="Review participants").click()
    expect(admin_page.get_by_role("heading", name=f"Review participants: {study}")).to_be_visible()
