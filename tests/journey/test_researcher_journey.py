"""A researcher's whole study, as a person does it, on the platform served as in production
(tests/journey/stack.py: collectstatic, granian with DEBUG off, a Celery worker and a GPU worker
on Redis, PostgreSQL): upload a corpus zip in the admin, create an emphasis study with an
attention check and a screening question without typing JSON, set it live, participants through
the real pages (3 in Chromium, the rest scripted over HTTP) until every clip has its target,
decisions on the review page, the agreement report from the study's page, a label set built,
finalized and exported in every format by clicking, the Hugging Face audiofolder loaded as the
docs say, the acoustic baseline launched from the admin with one run cancelled by its button.

Every step asserts what the person sees on the page. The seconds a person waits (upload, report,
label set, each export, benchmark) are printed at the end and written to journey-timings.json
in the test's tmp folder.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME CELERY_TEST_BROKER_URL=redis://127.0.0.1:6379/N \
        .venv/bin/python -m pytest -m journey
"""

import concurrent.futures
import csv
import io
import json
import math
import os
import random
import re
import time
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import require_service
from tests.journey import admin_pages
from tests.journey.corpus import CHECK_WORD, JourneyCorpus, write_corpus_zip
from tests.journey.crowd import levels_for, scripted_participant

BROKER_URL = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")
ON_POSTGRES = os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))

pytestmark = [
    pytest.mark.journey,
    pytest.mark.postgres,
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.skipif(not ON_POSTGRES, reason="the journey runs on PostgreSQL (DATABASE_URL=postgres://...)"),
    pytest.mark.django_db(transaction=True),
]

STUDY = "Journey stress study"
CORPUS = "journey"
LABEL_SET = "journey-labels"
TARGET, CLIPS_PER_TASK, CHECKS_PER_TASK = 3, 5, 1
BROWSER_PARTICIPANTS = 3
EXPORT_FORMATS = ["jsonl", "csv", "audiofolder", "parquet", "textgrid"]
SCREENING = {"text": "Are you 18 years or older?", "choices": ["Yes", "No"], "accepted": ["Yes"]}
PASSWORD = "journey-pw-4711"
REJECTED = 2  # participants rejected on the review page
REJECTION_MESSAGE = "Your marks did not follow the speaker's emphasis on most clips, so we cannot use them. " * 2
WAIT = 120_000  # ms: the longest a background job may keep a person waiting here
expect.set_options(timeout=15_000)  # a page on a busy CI machine


@dataclass
class Journey:
    page: Page
    base: str
    tmp: Path
    corpus: JourneyCorpus
    waits: dict[str, float] = field(default_factory=dict)
    steps: dict[str, float] = field(default_factory=dict)
    study_url: str = ""
    label_set_url: str = ""
    exports: dict[str, Path] = field(default_factory=dict)
    report_annotators: set[str] = field(default_factory=set)
    listening_refusals: list[str] = field(default_factory=list)  # submits refused although played through
    report_rejected: int = 0  # annotations of the rejected participants

    @contextmanager
    def waiting(self, what: str):
        """Time what a person waits for: from the click to the result on the page."""
        started = time.perf_counter()
        yield
        self.waits[what] = round(time.perf_counter() - started, 2)

    def open(self, path: str) -> None:
        self.page.goto(path if path.startswith("http") else f"{self.base}{path}")


@pytest.fixture
def stack(transactional_db, tmp_path):
    from django.db import connection

    from tests.journey.stack import database_url, served

    require_service("Celery broker", BROKER_URL)
    with served(database=database_url(connection.settings_dict), broker=BROKER_URL, scratch=tmp_path / "stack") as s:
        yield s


@pytest.fixture
def journey(stack, chromium, tmp_path, django_user_model):
    django_user_model.objects.create_superuser("researcher", "researcher@example.org", PASSWORD)
    context = chromium.new_context(base_url=stack.url, accept_downloads=True, viewport={"width": 1280, "height": 900})
    # Nothing leaves the machine; Prolific's completion page is answered here.
    context.route(
        re.compile(r"^https://app\.prolific\.com/"),
        lambda route: route.fulfill(status=200, content_type="text/html", body="<h1>Prolific (stand-in)</h1>"),
    )
    page = context.new_page()
    page.set_default_timeout(30_000)
    corpus = write_corpus_zip(tmp_path / "corpus")
    yield Journey(page=page, base=stack.url, tmp=tmp_path, corpus=corpus)
    context.close()


def test_a_researchers_study_from_corpus_upload_to_benchmark(journey, stack):
    started = time.perf_counter()
    steps = [
        step_the_admin_is_served_with_its_static_files,
        step_upload_the_corpus_zip,
        step_create_the_study_with_a_check_and_a_screening_question,
        step_set_the_study_live,
        step_participants_in_chromium,
        step_scripted_participants_until_every_clip_has_its_target,
        step_decisions_on_the_review_page,
        step_rejected_work_is_asked_for_again,
        step_agreement_report_from_the_study_page,
        step_build_and_finalize_a_label_set,
        step_export_the_label_set_in_every_format,
        step_load_the_audiofolder_and_parquet_exports_as_the_docs_say,
        step_benchmark_the_acoustic_baseline_and_cancel_a_run,
    ]
    try:
        for step in steps:
            begun = time.perf_counter()
            step(journey)
            journey.steps[step.__name__.removeprefix("step_")] = round(time.perf_counter() - begun, 2)
    finally:
        timings = {
            "journey_seconds": round(time.perf_counter() - started, 2),
            "person_waits_seconds": journey.waits,
            "step_seconds": journey.steps,
            "listening_refusals": journey.listening_refusals,
        }
        (journey.tmp / "journey-timings.json").write_text(json.dumps(timings, indent=2))
        print("\njourney timings:", json.dumps(timings, indent=2), f"\n(written to {journey.tmp}/journey-timings.json)")


# --- Steps ---------------------------------------------------------------------------------


def step_the_admin_is_served_with_its_static_files(j: Journey) -> None:
    admin_pages.log_in(j.page, j.base, "researcher", PASSWORD)
    for path in ("/static/admin/css/base.css", "/static/annotation/task.js", "/static/vendor/htmx-2.0.11.min.js"):
        reply = j.page.request.get(f"{j.base}{path}")
        assert reply.status == 200, f"{path}: {reply.status}"


def step_upload_the_corpus_zip(j: Journey) -> None:
    page = j.page
    j.open("/admin/annotation/corpus/")
    page.get_by_role("link", name="Import a corpus").click()
    page.set_input_files("#id_archive", str(j.corpus.zip_path))
    page.fill("#id_corpus_name", CORPUS)
    with j.waiting("upload"):
        page.get_by_role("button", name="Upload and import").click()
        expect(page.locator("#import-progress")).to_contain_text("Import succeeded", timeout=WAIT)
    clips = j.corpus.clips + 1  # the attention check's clip too
    expect(page.locator("#import-progress")).to_contain_text(f"{clips} clip(s) imported into “{CORPUS}”")
    # The new corpus is one click away, and lists its clips.
    corpus_link = page.locator("#import-progress").get_by_role("link", name=CORPUS)
    expect(corpus_link, "the import page links to the new corpus").to_be_visible()
    corpus_link.click()
    expect(page.locator("#content")).to_contain_text(CORPUS)


def step_create_the_study_with_a_check_and_a_screening_question(j: Journey) -> None:
    from annotation.models import Clip

    page = j.page
    j.open("/admin/annotation/study/")
    page.get_by_role("link", name="Add study").click()
    page.fill("#id_name", STUDY)
    page.select_option("#id_corpus", label=CORPUS)
    page.fill("#id_speakers", ", ".join(j.corpus.speakers))  # all but the check's instructor
    page.fill("#id_clips_per_task", str(CLIPS_PER_TASK))
    page.fill("#id_target_annotations", str(TARGET))
    page.fill("#id_attention_checks_per_task", str(CHECKS_PER_TASK))
    page.fill("#id_instructions", "Mark the words the speaker **stressed**.")
    page.fill("#id_consent_text", "We record which words you mark. Taking part is voluntary.")
    page.get_by_role("button", name="Create study").click()
    expect(page.locator(".messagelist")).to_contain_text(
        f"Created draft study '{STUDY}' with {j.corpus.clips} clip(s)."
    )
    j.study_url = page.url

    # One of the study's own clips as its check is refused, saying why (it would never be handed
    # out, yet count toward the target: issue 33); the clip meant for the check is taken.
    own = Clip.objects.filter(corpus__name=CORPUS).exclude(external_id=j.corpus.check_clip_id).first()
    admin_pages.add_attention_check(page, clip_pk=own.pk, levels={0: 1})
    page.get_by_role("button", name="Save and continue editing").click()
    expect(page.locator("#attention_checks-group")).to_contain_text(
        f"Clip '{own.external_id}' is one of the study's own clips"
    )
    check_clip = Clip.objects.get(corpus__name=CORPUS, external_id=j.corpus.check_clip_id)
    admin_pages.fill_attention_check(page, "attention_checks-0", clip_pk=check_clip.pk, levels={CHECK_WORD: 2})
    admin_pages.add_screening_question(page, **SCREENING)
    # New emphasis studies start with a headphone check, which neither the Chromium participants
    # nor the scripted ones (bench/_loadgen.py) take: tests/browser/test_headphone_check.py does.
    page.select_option("#id_headphone_check", "none")
    page.get_by_role("button", name="Save and continue editing").click()
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    expect(page.locator(".errornote")).to_have_count(0)
    # What was saved reads back as typed, still without JSON.
    expect(page.locator("#prerequisites-group")).to_contain_text(SCREENING["text"])
    choices = page.locator("#prerequisites-group textarea[name$='-choices']:not([name*='__prefix__'])").last
    assert choices.input_value().splitlines() == SCREENING["choices"]


def step_set_the_study_live(j: Journey) -> None:
    page = j.page
    j.open(j.study_url)
    expect(page.locator("#content")).to_contain_text("Ready: Set live hands out work.")
    page.get_by_role("button", name="Set live (hand out work)").click()
    expect(page.locator(".messagelist")).to_contain_text(f"Set live: {STUDY}.")
    j.open("/admin/annotation/study/")
    expect(page.locator("#result_list tbody tr", has_text=STUDY).locator("td.field-status")).to_have_text(
        re.compile("live", re.I)
    )


def step_participants_in_chromium(j: Journey) -> None:
    study = _study()
    for number in range(BROWSER_PARTICIPANTS):  # each in a browser of their own
        context = j.page.context.browser.new_context(base_url=j.base)
        context.route(
            re.compile(r"^https://app\.prolific\.com/"),
            lambda route: route.fulfill(status=200, content_type="text/html", body="<h1>Prolific (stand-in)</h1>"),
        )
        try:
            page = context.new_page()
            page.set_default_timeout(30_000)
            _participant_in_chromium(page, j.base, study, seed=number, refusals=j.listening_refusals)
        finally:
            context.close()


def step_scripted_participants_until_every_clip_has_its_target(j: Journey) -> None:
    _scripted_participants_until_every_clip_has_its_target(j, seed=100)


def _scripted_participants_until_every_clip_has_its_target(j: Journey, *, seed: int) -> None:
    from annotation.models import StudyItem

    study = _study()
    answers = {f"q{question.pk}": question.accepted[0] for question in study.prerequisites.all()}
    port = int(j.base.rsplit(":", 1)[1])
    results = []
    for _ in range(5):  # rounds: a round asks for the tasks still missing
        items = StudyItem.objects.filter(study=study)
        missing = sum(max(0, TARGET - item.completed_count) for item in items)
        if not missing:
            break
        tasks = math.ceil(missing / CLIPS_PER_TASK)
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(tasks, 6)) as pool:
            runs = [pool.submit(scripted_participant, port, study.slug, answers, seed + n) for n in range(tasks)]
            results += [run.result() for run in runs]
        seed += tasks
    errors = [error for result in results for error in result.errors]
    assert not errors, errors
    assert all(result.finished for result in results)
    # What the researcher sees: every clip at its target, on the study list and the study's page.
    total = j.corpus.clips * TARGET
    j.open("/admin/annotation/study/")
    row = j.page.locator("#result_list tbody tr", has_text=STUDY)
    expect(row.locator("td.field-progress")).to_contain_text(f"{total} of {total} annotations (100 %)")
    j.open(j.study_url)
    expect(j.page.locator("#content")).to_contain_text(re.compile(r"100\s?%"))
    expect(j.page.locator("#content")).to_contain_text(f"Complete: every clip has its {TARGET} annotation(s).")


def step_decisions_on_the_review_page(j: Journey) -> None:
    from annotation.models import Participant

    page = j.page
    j.open(j.study_url)
    page.get_by_role("link", name="Review participants").click()
    given = Participant.objects.filter(study=_study(), tasks__isnull=False).distinct().count()
    expect(page.locator("#content")).to_contain_text(f"{given} participants given a task")
    boxes = page.locator("#review tbody input[name=participants]")
    expect(boxes).to_have_count(given)
    for index in range(REJECTED):
        boxes.nth(index).check()
    page.select_option("#id_rejection_category", "LOW_EFFORT")
    page.fill("#id_rejection_message", REJECTION_MESSAGE)
    page.get_by_role("button", name="Reject selected").click()
    expect(page.locator(".messagelist")).to_contain_text("Rejected:")
    for index in range(REJECTED, given):
        boxes.nth(index).check()
    page.get_by_role("button", name="Approve selected").click()
    expect(page.locator(".messagelist")).to_contain_text("Approved:")
    expect(page.locator("#review tbody tr", has_text="Rejected")).to_have_count(REJECTED)
    expect(page.locator("#review tbody tr", has_text="Pending")).to_have_count(0)


def step_rejected_work_is_asked_for_again(j: Journey) -> None:
    """The rejected annotations no longer count: the study page says what is missing and why, the
    top-ups page asks for the places, and new participants annotate the clips again (issue 33)."""
    from annotation.models import Annotation

    rejected = Annotation.objects.filter(
        participant__study=_study(), participant__decision="rejected", item__study_item__isnull=False
    ).count()
    assert rejected, "the rejected participants annotated nothing"
    j.report_rejected = rejected
    j.open(j.study_url)
    content = j.page.locator("#content")
    expect(content).to_contain_text(f"Not complete: {rejected} annotation(s) missing")
    expect(content).to_contain_text(f"{rejected} left by rejected work")
    j.page.get_by_role("link", name="Top-ups").click()
    expect(j.page.locator("#topup-summary")).to_contain_text(f"{rejected} annotation(s) missing")
    _scripted_participants_until_every_clip_has_its_target(j, seed=500)


def step_agreement_report_from_the_study_page(j: Journey) -> None:
    page = j.page
    j.open(j.study_url)
    page.get_by_role("link", name="Agreement report", exact=True).click()
    with j.waiting("agreement_report"):
        page.get_by_role("button", name="Compute the report").click()
        expect(page.get_by_role("heading", name="Agreement", exact=True)).to_be_visible(timeout=WAIT)
    expect(page.locator("#report")).to_contain_text(f"{j.corpus.clips} clips")
    expect(page.locator("#report")).to_contain_text("Fleiss")
    # The default is every usable annotation, said first; the rejected work is not usable.
    usable = j.corpus.clips * TARGET
    selection = page.locator("#report-selection")
    expect(selection).to_contain_text(f"Computed from {usable} of {usable} usable annotations.")
    expect(selection).to_contain_text("Every usable annotation is used")
    expect(selection).to_contain_text(f"Not usable: {j.report_rejected} annotations of rejected participants.")
    # The pooled binary row has figures, not "undefined": the crowd agrees on most clips.
    pooled = page.locator("#report table").first.locator("tbody tr").first
    expect(pooled.locator("td.undefined")).to_have_count(0)
    reply = page.request.get(page.get_by_role("link", name="JSON", exact=True).get_attribute("href"))
    assert reply.status == 200
    j.report_annotators = _report_annotator_ids(reply.json())
    assert j.report_annotators, "the report's JSON names no annotator"
    _assert_no_prolific_ids(json.dumps(reply.json()), where="the agreement report's JSON")


def step_build_and_finalize_a_label_set(j: Journey) -> None:
    page = j.page
    j.open("/admin/evaluation/labelset/")
    page.get_by_role("link", name="Add label set").click()
    page.fill("#id_name", LABEL_SET)
    page.select_option("#id_studies", label=STUDY)
    page.fill("#id_train", "0.6")
    page.fill("#id_validation", "0.2")
    page.fill("#id_test", "0.2")
    page.fill("#id_resamples", "200")
    with j.waiting("label_set_build"):
        page.get_by_role("button", name="Build the label set").click()
        expect(page.locator("#label-set-build h2")).to_contain_text("Build succeeded", timeout=WAIT)
    j.label_set_url = page.url
    expect(page.locator("#content")).to_contain_text(f"{j.corpus.clips} clips")
    for language in ("en", "de"):  # 10 clips each: 6 / 2 / 2
        expect(page.get_by_role("row", name=re.compile(rf"^{language} 6 2 2$"))).to_be_visible()
    with j.waiting("label_set_finalize"):
        page.get_by_role("button", name="Finalize").click()
        expect(page.locator(".messagelist")).to_contain_text("finalized: its rows are frozen")
    expect(page.get_by_role("heading", name=f"{LABEL_SET} v1: final")).to_be_visible()
    expect(page.get_by_role("button", name="Archive")).to_be_visible()


def step_export_the_label_set_in_every_format(j: Journey) -> None:
    page = j.page
    folder = j.tmp / "exports"
    folder.mkdir()
    for export_format in EXPORT_FORMATS:
        j.open(j.label_set_url)
        page.select_option("#action-format", export_format)
        with j.waiting(f"export_{export_format}"):
            page.get_by_role("button", name="Export", exact=True).click()
            download_link = page.locator("#export-progress a", has_text="Download")
            expect(download_link).to_be_visible(timeout=WAIT)
        expect(page.locator("#export-progress h2")).to_contain_text("succeeded")
        with page.expect_download() as download:
            download_link.click()
        target = folder / f"{export_format}.zip"
        download.value.save_as(target)
        assert download.value.suggested_filename == f"{LABEL_SET}-v1-{export_format}.zip"
        j.exports[export_format] = target

    for export_format, path in j.exports.items():
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            assert "README.md" in names, (export_format, names)
            _assert_no_prolific_ids(archive.read("README.md").decode(), where=f"the {export_format} data card")
    with zipfile.ZipFile(j.exports["jsonl"]) as archive:
        clips = [json.loads(line) for line in archive.read("clips.jsonl").decode().splitlines()]
        assert len(clips) == j.corpus.clips
        _assert_no_prolific_ids(archive.read("clips.jsonl").decode(), where="clips.jsonl")
    exported = {annotator for clip in clips for annotator in _clip_annotators(clip)}
    # One annotator identity in every artefact of a study: the export's annotators are the report's.
    assert exported and exported <= j.report_annotators, (sorted(j.report_annotators)[:3], sorted(exported)[:3])
    with zipfile.ZipFile(j.exports["csv"]) as archive:
        words = list(csv.DictReader(io.StringIO(archive.read("words.csv").decode())))
        assert {row["split"] for row in words} == {"train", "validation", "test"}
    with zipfile.ZipFile(j.exports["textgrid"]) as archive:
        grids = [name for name in archive.namelist() if name.endswith(".TextGrid")]
        assert len(grids) == j.corpus.clips


def step_load_the_audiofolder_and_parquet_exports_as_the_docs_say(j: Journey) -> None:
    import datasets

    data_dir = j.tmp / "audiofolder"
    with zipfile.ZipFile(j.exports["audiofolder"]) as archive:
        archive.extractall(data_dir)
    loaded = datasets.load_dataset("audiofolder", data_dir=str(data_dir))
    assert sorted(loaded) == ["test", "train", "validation"]
    assert sum(len(split) for split in loaded.values()) == j.corpus.clips
    row = loaded["train"][0]
    samples, rate = _decoded(row["audio"])
    assert rate == 16000
    assert 0.8 * 16000 < len(samples) < 1.2 * 16000  # a clip of about a second
    # Every clip's emotion ("angry" as in the README's manifest, "sad" likewise) gave an arousal.
    for split in loaded.values():
        assert all(split["arousal"]), sorted(set(split["emotion"]))

    # The Parquet export, read as the docs say: by datasets and by pandas, no codec needed.
    import pandas

    parquet_dir = j.tmp / "parquet"
    with zipfile.ZipFile(j.exports["parquet"]) as archive:
        archive.extractall(parquet_dir)
    tables = datasets.load_dataset("parquet", data_dir=str(parquet_dir / "data"))
    assert sorted(tables) == ["test", "train", "validation"]
    assert sum(len(split) for split in tables.values()) == j.corpus.clips
    frame = pandas.read_parquet(parquet_dir / "data" / "train.parquet")
    assert len(frame) == len(tables["train"]) and frame["audio"].iloc[0]["bytes"][:4] == b"RIFF"


def step_benchmark_the_acoustic_baseline_and_cancel_a_run(j: Journey) -> None:
    page = j.page
    j.open("/admin/evaluation/labelset/")
    admin_pages.run_admin_action(page, row_text=LABEL_SET, action_label="Launch a benchmark")
    expect(page.get_by_role("heading", name="Launch a benchmark")).to_be_visible()
    page.select_option("#id_detector", "acoustic")
    page.select_option("#id_setting", "monolingual")
    page.fill("#id_resamples", "200")
    launched = time.perf_counter()
    page.get_by_role("button", name="Launch").click()
    expect(page.locator(".messagelist")).to_contain_text("2 run(s) queued for a GPU worker.")
    runs = page.locator("#benchmark-results table").first.locator("tbody tr")
    expect(runs).to_have_count(2)
    group_url = page.url

    # The second run waits behind the first on the one GPU worker: cancel it with its button.
    runs.nth(1).get_by_role("link").click()
    page.get_by_role("button", name="Cancel this run").click()
    expect(page.locator(".messagelist")).to_contain_text("cancel requested")
    expect(page.locator("#run-progress h2")).to_contain_text("cancelled", timeout=WAIT)

    j.open(group_url)
    page.locator("#benchmark-results table").first.locator("tbody tr").first.get_by_role("link").click()
    expect(page.get_by_role("heading", name="Test scores")).to_be_visible(timeout=WAIT)
    j.waits["benchmark"] = round(time.perf_counter() - launched, 2)
    scores = page.locator("#run-results table").first
    expect(scores.locator("tbody tr").first).to_contain_text(re.compile(r"\d\.\d{3}"))
    j.open(group_url)
    statuses = page.locator("#benchmark-results table").first.locator("tbody tr")
    expect(statuses.nth(0)).to_contain_text("succeeded")
    expect(statuses.nth(1)).to_contain_text("cancelled")


# --- What the steps share ------------------------------------------------------------------


def _study():
    from annotation.models import Study

    return Study.objects.get(name=STUDY)


def _participant_in_chromium(page: Page, base: str, study, *, seed: int, refusals: list[str]) -> None:
    """From a Prolific link through consent, screening and instructions, every clip played to
    its end and marked by clicking its words, to the completion redirect."""
    rng = random.Random(seed)
    ids = "".join(rng.choice("0123456789abcdef") for _ in range(24))
    page.goto(f"{base}/s/{study.slug}/?PROLIFIC_PID={ids}&STUDY_ID={'a' * 24}&SESSION_ID={ids[::-1]}")
    expect(page.get_by_role("heading", name="Consent")).to_be_visible()
    page.get_by_role("button", name="I agree and want to take part").click()
    expect(page).to_have_url(f"{base}/s/{study.slug}/screening/")
    for question in study.prerequisites.order_by("position"):
        page.get_by_role("group", name=question.text).get_by_label(question.accepted[0], exact=True).check()
    page.get_by_role("button", name="Continue").click()
    expect(page).to_have_url(f"{base}/s/{study.slug}/instructions/")
    page.get_by_role("button", name="Start").click()
    items = CLIPS_PER_TASK + CHECKS_PER_TASK
    expect(page.locator(".progress")).to_contain_text(f"Clip 1 of {items}")
    for number in range(1, items + 1):
        _play_to_end(page)
        words = page.locator("#task-item .word")
        texts = [text.strip() for text in words.evaluate_all("ws => ws.map(w => w.firstChild.textContent)")]
        for index, level in enumerate(levels_for(texts, rng)):
            for _ in range(level):
                words.nth(index).click()
        _submit(page, refusals, after=f"Clip {number + 1} of {items}" if number < items else None)
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    expect(page.locator(".code")).to_have_text(study.completion_code)
    page.get_by_role("link", name="Return to Prolific now").click()
    expect(page).to_have_url(
        re.compile(rf"^https://app\.prolific\.com/submissions/complete\?cc={study.completion_code}")
    )
    expect(page.get_by_role("heading", name="Prolific (stand-in)")).to_be_visible()


def _play_to_end(page: Page) -> None:
    """Play the clip (muted) from its start to its end, as a person listening through."""
    page.eval_on_selector(
        "#clip-audio",
        """audio => new Promise(ended => {
        audio.addEventListener("ended", () => ended(true), {once: true});
        audio.muted = true; audio.currentTime = 0; audio.play(); })""",
    )
    expect(page.locator("#clip-audio[data-heard]")).to_be_attached()


def _submit(page: Page, refusals: list[str], *, after: str | None) -> None:
    """Submit and see the next clip (`after`, its progress text) or the thank-you page. A submit
    refused although the clip was played through is noted; the person then listens again, as
    the page asks, and submits once more."""
    for attempt in range(2):
        submit = page.locator("#submit")
        expect(submit, page.locator("#gate-reason").inner_text()).to_be_enabled()
        submit.click()
        moved_on = (
            page.locator(".progress", has_text=after) if after else page.get_by_role("heading", name="Thank you!")
        )
        refused = page.locator("#gate-errors p.error")
        expect(moved_on.or_(refused)).to_be_visible()
        if moved_on.is_visible():
            return
        refusals.append(refused.first.inner_text())
        if attempt == 0:
            _play_to_end(page)
    pytest.fail(f"the submit was refused twice: {refusals[-2:]}")


def _report_annotator_ids(report: dict) -> set[str]:
    annotators = report.get("annotators", {})
    return {row["annotator"] for row in annotators.get("rows", [])}


def _clip_annotators(clip: dict) -> set[str]:
    return set(clip["annotators"])


def _assert_no_prolific_ids(text: str, *, where: str) -> None:
    from annotation.models import Participant

    shown = [
        pid
        for pid in Participant.objects.exclude(prolific_pid="").values_list("prolific_pid", flat=True)
        if pid and pid in text
    ]
    assert not shown, f"{where} shows Prolific ids: {shown[:3]}"


def _decoded(audio) -> tuple[list, int]:
    """The samples and rate of a decoded audio cell: a dict (datasets 3) or a decoder (datasets 4)."""
    if isinstance(audio, dict):
        return audio["array"], audio["sampling_rate"]
    samples = audio.get_all_samples()
    return samples.data[0], samples.sample_rate
