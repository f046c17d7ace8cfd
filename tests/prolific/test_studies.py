"""A study run on Prolific from ours, against the contract fake: its draft with MMEE's screeners,
publish, grow places as the clips need (never down, never past the ceiling), follow Prolific's
status, stop; participant groups for exclusion; the same through the background job."""

import math

import pytest
from django.utils import timezone

from annotation.models import Study
from annotation.services.studies import ClipSelection, study_create, task_minutes_estimate
from prolific.models import ProlificParticipantGroup, ProlificStudy, ProlificStudyJob
from prolific.services import studies as service
from prolific.services.study_jobs import JobBusy, prolific_study_job_create
from tests.annotation.factories import ClipFactory, CorpusFactory, ParticipantFactory

pytestmark = pytest.mark.django_db
SITE = "https://annotate.example.org"


def english_study(*, clips=8, **settings) -> Study:
    corpus = CorpusFactory()
    for _ in range(clips):
        ClipFactory(corpus=corpus, language="en", duration=6.0)
    settings = {
        "clips_per_task": 4,
        "target_annotations": 3,
        "attention_checks_per_task": 0,
        "consent_text": "We record which words you mark. Taking part is voluntary.",
        "headphone_check": "none",  # its minutes (and so the reward): tests/annotation/test_headphone_check.py
        **settings,
    }
    return study_create(name=f"mmee-{corpus.pk}", corpus=corpus, selection=ClipSelection(), **settings)


def created(study, settings, **fields) -> ProlificStudy:
    prolific_study = service.prolific_study_propose(study=study)
    for name, value in fields.items():
        setattr(prolific_study, name, value)
    prolific_study.save()
    return service.prolific_study_create(
        prolific_study=prolific_study, site_url=SITE, filter_ids=settings.PROLIFIC_FILTER_IDS
    )


def choice(fake, filter_id, label):
    screener = next(item for item in fake.state["filters"] if item["filter_id"] == filter_id)
    return next(key for key, value in screener["choices"].items() if value == label)


def test_the_proposal_takes_minutes_from_the_clips_and_the_reward_from_the_rate():
    study = english_study()
    proposal = service.prolific_study_propose(study=study, hourly_rate_cents=1500)
    minutes = task_minutes_estimate(study)  # 2 min entry + 4 clips x (2 x 6 s + 10 s)
    assert minutes == math.ceil((120 + 4 * (2 * 6 + 10)) / 60) == 4
    assert proposal.estimated_minutes == minutes
    assert proposal.reward_cents == 100  # 15.00 an hour for 4 minutes
    assert proposal.places == 6  # 8 clips x 3 annotations / 4 clips a task
    assert proposal.language == "English"
    assert (proposal.approval_rate_min, proposal.approval_rate_max, proposal.approvals_min) == (99, 100, 25)
    assert proposal.device_compatibility == ["desktop"] and proposal.peripheral_requirements == ["audio"]


def test_a_study_is_created_published_grown_followed_and_stopped(prolific_fake, settings):
    study = english_study()
    prolific_study = created(study, settings, places_ceiling=10, auto_grow=True)

    sent = prolific_fake.state["studies"][prolific_study.prolific_id]
    assert (prolific_study.status, study.status) == ("UNPUBLISHED", Study.Status.DRAFT)
    assert sent["external_study_url"] == (
        f"{SITE}/s/{study.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
        "&SESSION_ID={{%SESSION_ID%}}"
    )
    assert (sent["reward"], sent["total_available_places"], sent["estimated_completion_time"]) == (100, 6, 4)
    no = choice(prolific_fake, "hearing-difficulties", "No")
    english = choice(prolific_fake, "first-language", "English")
    degrees = [
        choice(prolific_fake, "highest-education-level-completed", label) for label in service.UNDERGRADUATE_OR_HIGHER
    ]
    assert sent["filters"] == [  # MMEE's prerequisites
        {"filter_id": "first-language", "selected_values": [english]},
        {"filter_id": "fluent-languages", "selected_values": [english]},
        {"filter_id": "approval_rate", "selected_range": {"lower": 99, "upper": 100}},
        {"filter_id": "approval_numbers", "selected_range": {"lower": 25}},
        {"filter_id": "highest-education-level-completed", "selected_values": degrees},
        {"filter_id": "hearing-difficulties", "selected_values": [no]},
        {"filter_id": "literacy-difficulties", "selected_values": [no]},
    ]
    assert [(code["code"], code["code_type"], code["actions"]) for code in sent["completion_codes"]] == [
        (study.completion_code, "COMPLETED", [{"action": "MANUALLY_REVIEW"}]),
        (
            study.screen_out_code,
            "FIXED_SCREENOUT",
            [{"action": "FIXED_SCREEN_OUT_PAYMENT", "fixed_screen_out_reward": 10, "slots": 50}],
        ),
        (prolific_study.attention_failed_code, "FAILED_ATTENTION_CHECK", [{"action": "MANUALLY_REVIEW"}]),
    ]

    service.prolific_study_act(prolific_study=prolific_study, action="publish")
    study.refresh_from_db()
    assert (prolific_study.status, study.status) == ("ACTIVE", Study.Status.LIVE)

    sent["places_taken"] = 6  # every place taken, none of it delivered yet: 6 places still needed
    growth = service.prolific_places_grow(prolific_study=prolific_study)
    assert (growth.before, growth.after) == (6, 10)  # 12 wanted, the ceiling is 10
    assert sent["total_available_places"] == 10 and prolific_study.total_available_places == 10
    assert "places 6 -> 10" in growth.summary()
    again = service.prolific_places_grow(prolific_study=prolific_study)
    assert again.added == 0 and "at the ceiling of 10" in again.summary()
    assert [b["total_available_places"] for b in prolific_fake.bodies("PATCH", r"studies/[^/]+/")] == [10]

    sent["status"] = "PAUSED"  # the researcher paused it in Prolific's web app
    assert service.prolific_studies_follow() == [(prolific_study, "status PAUSED")]
    study.refresh_from_db()
    assert study.status == Study.Status.PAUSED  # ours follows, never contradicts

    service.prolific_study_act(prolific_study=prolific_study, action="resume")
    service.prolific_study_act(prolific_study=prolific_study, action="stop")
    study.refresh_from_db()
    assert (prolific_study.status, study.status) == ("AWAITING REVIEW", Study.Status.CLOSED)
    with pytest.raises(service.ProlificSetupError, match="Cannot publish a study that is awaiting review"):
        service.prolific_study_act(prolific_study=prolific_study, action="publish")


def test_growth_never_lowers_places_and_needs_no_ceiling_to_refuse(prolific_fake, settings):
    study = english_study()
    prolific_study = created(study, settings)  # no ceiling: the study does not grow
    service.prolific_study_act(prolific_study=prolific_study, action="publish")
    prolific_fake.state["studies"][prolific_study.prolific_id]["places_taken"] = 6
    growth = service.prolific_places_grow(prolific_study=prolific_study)
    assert (growth.before, growth.after) == (6, 6)
    assert prolific_fake.calls_to("PATCH", r"studies/[^/]+/") == []


def test_a_create_whose_answer_was_lost_takes_the_draft_prolific_made(prolific_fake, settings):
    study = english_study()
    prolific_study = service.prolific_study_propose(study=study)
    prolific_study.save()
    prolific_fake.fail("POST", "studies/", 504, after_handling=True)
    with pytest.raises(service.ProlificError, match="504"):
        service.prolific_study_create(
            prolific_study=prolific_study, site_url=SITE, filter_ids=settings.PROLIFIC_FILTER_IDS
        )
    assert prolific_study.prolific_id == "" and len(prolific_fake.state["studies"]) == 1

    service.prolific_study_create(prolific_study=prolific_study, site_url=SITE, filter_ids=settings.PROLIFIC_FILTER_IDS)
    assert [prolific_study.prolific_id] == list(prolific_fake.state["studies"])  # the same draft, no second
    with pytest.raises(service.ProlificSetupError, match="Already created"):
        service.prolific_study_create(
            prolific_study=prolific_study, site_url=SITE, filter_ids=settings.PROLIFIC_FILTER_IDS
        )


def test_an_unknown_screener_or_language_is_named_before_anything_is_created(prolific_fake, settings):
    study = english_study()
    with pytest.raises(service.ProlificSetupError, match="no choice 'Klingon'"):
        created(study, settings, language="Klingon")
    settings.PROLIFIC_FILTER_IDS = {**settings.PROLIFIC_FILTER_IDS, "education": "schooling"}
    with pytest.raises(service.ProlificSetupError, match="no screener 'schooling'"):
        created(english_study(), settings)
    assert prolific_fake.state["studies"] == {}


def test_annotators_go_to_a_group_that_another_study_excludes(prolific_fake, settings):
    wave_1 = english_study()
    done = [ParticipantFactory(study=wave_1, completed_at=timezone.now()) for _ in range(3)]
    ParticipantFactory(study=wave_1)  # never finished: not an annotator
    rejected = ParticipantFactory(study=wave_1, completed_at=timezone.now(), decision="rejected")

    group, added = service.prolific_group_add(study=wave_1, members="annotators", name="wave 1", workspace_id="w")
    assert added == 4 and group.participant_count == 4
    members = prolific_fake.state["group_members"][group.prolific_id]
    assert set(members) == {p.prolific_pid for p in [*done, rejected]}
    _, again = service.prolific_group_add(study=wave_1, members="rejected", group=group)
    assert again == 1 and ProlificParticipantGroup.objects.get().participant_count == 4  # already in

    wave_2 = created(english_study(), settings, exclude_group=group)
    sent = prolific_fake.state["studies"][wave_2.prolific_id]["filters"]
    assert sent[-1] == {"filter_id": "participant_group_blocklist", "selected_values": [group.prolific_id]}


def test_a_new_group_needs_a_workspace(prolific_fake):
    with pytest.raises(service.ProlificSetupError, match="PROLIFIC_WORKSPACE_ID"):
        service.prolific_group_add(study=english_study(), members="annotators", name="g", workspace_id="")


def test_the_admins_actions_run_as_jobs_one_at_a_time(prolific_fake, settings, django_capture_on_commit_callbacks):
    study = english_study()
    prolific_study = service.prolific_study_propose(study=study)
    prolific_study.save()
    with django_capture_on_commit_callbacks(execute=False):
        queued = prolific_study_job_create(prolific_study=prolific_study, action="create", site_url=SITE)
        with pytest.raises(JobBusy):
            prolific_study_job_create(prolific_study=prolific_study, action="publish")
    ProlificStudyJob.objects.all().delete()

    with django_capture_on_commit_callbacks(execute=True):
        job = prolific_study_job_create(prolific_study=prolific_study, action="create", site_url=SITE)
    job.refresh_from_db()
    assert job.status == "succeeded" and job.outcome.startswith("Created on Prolific as ")
    with django_capture_on_commit_callbacks(execute=True):
        publish = prolific_study_job_create(prolific_study=prolific_study, action="publish")
        pause_too_early = None
    publish.refresh_from_db()
    assert publish.outcome == "Publish: Prolific says Active."
    with django_capture_on_commit_callbacks(execute=True):
        pause_too_early = prolific_study_job_create(prolific_study=prolific_study, action="resume")
    pause_too_early.refresh_from_db()
    assert pause_too_early.status == "failed" and "Cannot resume a study that is active" in pause_too_early.error
    assert queued.pk != job.pk


def test_a_study_of_ours_that_cannot_take_participants_is_not_published(prolific_fake, settings):
    prolific_study = created(english_study(consent_text=""), settings)
    with pytest.raises(service.ProlificSetupError, match="cannot go live yet: it has no consent text"):
        service.prolific_study_act(prolific_study=prolific_study, action="publish")
    assert prolific_fake.state["studies"][prolific_study.prolific_id]["status"] == "UNPUBLISHED"


def test_a_participant_our_screening_sends_away_gets_the_paid_screen_out_code(client, prolific_fake, settings):
    from annotation.models import PrerequisiteQuestion

    study = english_study()
    prolific_study = created(study, settings)
    service.prolific_study_act(prolific_study=prolific_study, action="publish")
    client.get(f"/s/{study.slug}/?PROLIFIC_PID={'a' * 24}&STUDY_ID={prolific_study.prolific_id}&SESSION_ID={'b' * 24}")
    client.post(f"/s/{study.slug}/consent/", {"agree": "yes"})
    answers = {f"q{q.pk}": q.choices[-1] for q in PrerequisiteQuestion.objects.filter(study=study)}
    page = client.post(f"/s/{study.slug}/screening/", answers).content.decode()

    paid = next(
        code
        for code in prolific_fake.state["studies"][prolific_study.prolific_id]["completion_codes"]
        if code["actions"][0]["action"] == "FIXED_SCREEN_OUT_PAYMENT"
    )
    assert f"cc={paid['code']}" in page  # the redirect to Prolific pays the fixed screen-out reward
    assert paid["code"] == study.screen_out_code


def test_a_passing_status_prolific_does_not_document_changes_nothing(prolific_fake, settings):
    prolific_study = created(english_study(), settings)
    service.prolific_study_act(prolific_study=prolific_study, action="publish")
    prolific_fake.state["studies"][prolific_study.prolific_id]["status"] = "PROCESSING"
    service.prolific_study_sync(prolific_study=prolific_study)
    assert prolific_study.status == "ACTIVE" and prolific_study.study.status == Study.Status.LIVE


@pytest.mark.django_db(transaction=True)
def test_workers_follow_running_studies_by_themselves(prolific_fake, settings):
    import threading
    import time

    prolific_study = created(english_study(), settings, places_ceiling=10, auto_grow=True)
    service.prolific_study_act(prolific_study=prolific_study, action="publish")
    sent = prolific_fake.state["studies"][prolific_study.prolific_id]
    sent["places_taken"] = 6
    settings.PROLIFIC_FOLLOW_SECONDS = 0.05
    stopped = threading.Event()
    follower = threading.Thread(target=service.prolific_follow_periodically, args=(stopped,), daemon=True)
    follower.start()
    deadline = time.monotonic() + 20
    while sent["total_available_places"] != 10 and time.monotonic() < deadline:
        time.sleep(0.05)
    stopped.set()
    follower.join(timeout=10)
    assert sent["total_available_places"] == 10  # grown by the worker's own thread
    prolific_study.refresh_from_db()
    assert prolific_study.total_available_places == 10
