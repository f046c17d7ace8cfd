"""A study that cannot stall or shrink without saying so (issue 33), as a researcher and the
participants meet it: the admin's pages and the participant pages through Django's test client
(no browser, no worker: a few seconds), on whatever database the suite runs on; the journey's
own run is on PostgreSQL (DATABASE_URL=postgres://...).

The researcher picks one of the study's own clips as its attention check and is told why not,
picks another clip of the corpus, sets the study live with the page's button; four participants
fill it, one of them marking the check's word heavily where "emphasized" is asked (which passes:
at least the level named); two are rejected on the review page. The study page then says what
is missing and why, the top-up opens exactly the places the rejected work left, two more
participants fill them, and the agreement report and the label set take every usable annotation
by default, saying so first.
"""

import html
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import AttentionCheck, Corpus, Participant, PrerequisiteQuestion, Study, TaskItem
from annotation.services.studies import ClipSelection, study_create
from evaluation.models import LabelSet
from tests.annotation.admin_forms import change_page_data
from tests.annotation.factories import ClipFactory
from tests.annotation.study_helpers import listened

pytestmark = pytest.mark.django_db

WORDS = "one two three four five six seven eight nine ten"
CLIPS, TARGET, PER_TASK = 6, 2, 3
REJECTION = "Your answers marked the same word in every clip, whatever was said; " * 2


def text(response) -> str:
    return html.unescape(response.content.decode())


@pytest.fixture
def researcher(client):
    client.force_login(User.objects.create_superuser("researcher", "r@example.org", "a long admin password"))
    return client


@pytest.fixture
def study():
    corpus = Corpus.objects.create(name="stall")
    for index in range(CLIPS + 1):  # the last is meant for the attention check
        ClipFactory(corpus=corpus, external_id=f"clip-{index}", transcript=WORDS, duration=2.0)
    return study_create(
        name="Never stalls",
        corpus=corpus,
        selection=ClipSelection(clip_ids=[f"clip-{index}" for index in range(CLIPS)]),
        clips_per_task=PER_TASK,
        target_annotations=TARGET,
        attention_checks_per_task=1,
        places=4,
        headphone_check=Study.HeadphoneCheck.NONE,
        consent_text="I agree.",
    )


def study_page(client, study) -> str:
    return text(client.get(reverse("admin:annotation_study_change", args=[study.pk])))


def add_check(client, study, clip_id: str):
    """The researcher's attention check: the word "three" must be emphasized (1)."""
    page = reverse("admin:annotation_study_change", args=[study.pk])
    data = change_page_data(client.get(page))
    clip = study.corpus.clips.get(external_id=clip_id)
    data.update(
        {
            "attention_checks-TOTAL_FORMS": "1",
            "attention_checks-0-clip": str(clip.pk),
            "attention_checks-0-kind": "instructed",
            "attention_checks-0-emphasized": "three",
        }
    )
    return client.post(page, data)


def participant_does_a_task(client, study, pid: str, *, check_level: int = 1) -> Participant:
    """Study link, consent, screening, instructions, then every clip played and marked (word 1);
    on the check, word "three" at `check_level`."""
    ids = f"PROLIFIC_PID={pid}&STUDY_ID={'a' * 24}&SESSION_ID={'b' * 24}"
    client.get(f"/s/{study.slug}/?{ids}")
    client.post(f"/s/{study.slug}/consent/", {"agree": "yes"})
    answers = {f"q{q.pk}": q.accepted[0] for q in PrerequisiteQuestion.objects.filter(study=study)}
    client.post(f"/s/{study.slug}/screening/", answers)
    client.post(f"/s/{study.slug}/instructions/")
    participant = Participant.objects.get(study=study, prolific_pid=pid)
    task = participant.tasks.get()
    assert task.items.count() == PER_TASK + 1, "every task holds its clips and the attention check"
    for _ in range(PER_TASK + 1):
        page = client.get(f"/s/{study.slug}/task/").content.decode()
        item = TaskItem.objects.get(pk=int(re.search(r'data-item="(\d+)"', page).group(1)))
        listened(item)
        levels = [0] * item.word_count
        if item.attention_check_id:
            levels[2] = check_level
        else:
            levels[1] = 1
        response = client.post(
            f"/s/{study.slug}/task/items/{item.pk}/submit",
            {"levels": ",".join(map(str, levels)), "events": "[]"},
            HTTP_HX_REQUEST="true",
        )
        assert response.status_code == 200, response.content[:300]
    assert response["HX-Redirect"] == f"/s/{study.slug}/done/"
    return participant


def test_a_study_says_why_it_is_not_complete_and_its_report_takes_every_annotation(
    researcher, study, django_capture_on_commit_callbacks
):
    # The attention check: one of the study's own clips is refused, saying why; another is taken.
    refused = add_check(researcher, study, "clip-0")
    assert refused.status_code == 200
    assert "Clip 'clip-0' is one of the study's own clips" in text(refused)
    assert add_check(researcher, study, f"clip-{CLIPS}").status_code == 302
    check = AttentionCheck.objects.get(study=study)
    assert check.rule == AttentionCheck.Rule.AT_LEAST

    # Set live with the page's button.
    assert "Ready: Set live hands out work." in study_page(researcher, study)
    researcher.post(reverse("admin:annotation_study_status", args=[study.pk, "live"]))
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE

    # Four participants fill the study; one marks the check's word heavily: at least emphasized.
    people = [
        participant_does_a_task(Client(), study, f"{index:024x}", check_level=2 if index == 1 else 1)
        for index in range(1, 5)
    ]
    page = study_page(researcher, study)
    assert f"Complete: every clip has its {TARGET} annotation(s)." in page
    assert "4 of 4 check answers passed (100%); 4 of 4 participants passed every check." in page

    # Two rejected on the review page: their six annotations no longer count.
    review = reverse("admin:annotation_participant_review", args=[study.pk])
    decided = researcher.post(
        review,
        {
            "participants": [people[0].pk, people[1].pk],
            "decision": "rejected",
            "rejection_category": "LOW_EFFORT",
            "rejection_message": REJECTION,
        },
    )
    assert decided.status_code == 302
    page = study_page(researcher, study)
    missing = 2 * PER_TASK
    assert f"Not complete: {missing} annotation(s) missing on {missing} of {CLIPS} clip(s)" in page
    assert f"{missing} not yet handed out" in page and f"{missing} left by rejected work" in page

    # The top-up opens the places the rejected work left, and two more participants fill them.
    topups = reverse("admin:annotation_study_topup", args=[study.pk])
    assert f"{missing} annotation(s) missing on {missing} clip(s); 2 place(s) needed" in text(researcher.get(topups))
    researcher.post(topups)
    study.refresh_from_db()
    assert study.places == 6
    for index in (5, 6):
        participant_does_a_task(Client(), study, f"{index:024x}")
    assert f"Complete: every clip has its {TARGET} annotation(s)." in study_page(researcher, study)
    study.refresh_from_db()
    assert study.target_reached_at is not None

    # The agreement report takes every usable annotation by default and says so first.
    report_page = reverse("admin:evaluation_agreementreport_study", args=[study.pk])
    form = researcher.get(report_page).context["form"]
    defaults = {name: "" if value is None else value for name, value in form.initial.items() if value is not False}
    with django_capture_on_commit_callbacks(execute=True):
        computed = researcher.post(report_page, defaults)
    report = text(researcher.get(computed["Location"]))
    usable = CLIPS * TARGET
    assert f"Computed from {usable} of {usable} usable annotations. Every usable annotation is used" in report
    assert f"Not usable: {missing} annotations of rejected participants." in report

    # So does the label set made with the admin's defaults.
    with django_capture_on_commit_callbacks(execute=True):
        researcher.post(
            reverse("admin:evaluation_labelset_add"),
            {"name": "never-stalls", "studies": [study.pk], "seed": 0, "split_seed": 0}
            | {"train": 0.8, "validation": 0.1, "test": 0.1, "resamples": 0},
        )
    label_set = LabelSet.objects.get(name="never-stalls")
    assert label_set.status == LabelSet.Status.SUCCEEDED, label_set.error
    assert label_set.summary["clips"] == CLIPS and label_set.parameters["subsample"] is None
    shown = text(researcher.get(reverse("admin:evaluation_labelset_change", args=[label_set.pk])))
    assert "Every usable annotation (no subsample)" in shown
