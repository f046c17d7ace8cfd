"""Participant review: the per-participant rows, decisions, export, and the admin page."""

import json

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation.models import Annotation, Participant, StudyItem
from annotation.participant_names import opaque_annotator_id
from annotation.selectors.review import FLAG_ATTENTION, FLAG_KAPPA, FLAG_TOO_QUICK, participant_review_rows
from annotation.services.review import (
    approved_prolific_ids,
    participant_decide,
    participants_decide,
    rejection_parts,
)
from evaluation.services.agreement_reports import agreement_report_compute, report_parameters
from evaluation.stats.annotator_quality import leave_one_out_kappa
from tests.annotation.factories import (
    AnnotationFactory,
    AttentionCheckFactory,
    ClipFactory,
    ParticipantFactory,
    StudyFactory,
    StudyItemFactory,
    TaskFactory,
    TaskItemFactory,
)

pytestmark = pytest.mark.django_db

WORDS = "one two three four five six"
CONSENSUS = [[2, 0, 0, 1, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 2, 0, 0, 1], [1, 0, 0, 0, 1, 0]]
CLEO = [CONSENSUS[0], CONSENSUS[1], CONSENSUS[2], [1, 0, 0, 0, 0, 0]]  # one word fewer on the last clip
DAN = [[0, 0, 0, 0, 0, 1]] * 4  # the same word everywhere, whatever the audio
CHECK_PASSED, CHECK_FAILED = [0, 2, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0]  # the check asks for word 2 at level 2
MESSAGE = (
    "Your answers to the attention check clip did not follow its spoken instruction, and the words you marked "
    "did not match the audio of the other clips."
)


class SmallStudy:
    """Four clips and an attention check; six participants, one of them careless."""

    def __init__(self):
        self.study = StudyFactory(review_min_attention=1.0, review_min_kappa=0.1, review_min_time_ratio=1.0)
        self.clips = [ClipFactory(corpus=self.study.corpus, transcript=WORDS) for _ in CONSENSUS]
        for clip in self.clips:
            StudyItemFactory(study=self.study, clip=clip)
        self.check = AttentionCheckFactory(
            study=self.study, clip=ClipFactory(corpus=self.study.corpus, transcript=WORDS), expected={"1": 2}
        )
        self.ana = self.participant(CONSENSUS, check=CHECK_PASSED, seconds=14)
        self.ben = self.participant(CONSENSUS, check=CHECK_PASSED, seconds=11)
        self.cleo = self.participant(CLEO, check=CHECK_PASSED, seconds=9)
        self.dan = self.participant(DAN, check=CHECK_FAILED, seconds=1.5)
        self.eve = self.participant(CONSENSUS[:1], seconds=20)  # left after one clip
        self.fay = ParticipantFactory(study=self.study)  # consented, nothing submitted

    def participant(self, answers, *, check=None, seconds) -> Participant:
        task = TaskFactory(participant=ParticipantFactory(study=self.study))
        for clip, levels in zip(self.clips, answers):
            AnnotationFactory(item=TaskItemFactory(task=task, clip=clip), levels=levels, seconds_spent=seconds)
        if check:
            item = TaskItemFactory(task=task, clip=self.check.clip, attention_check=self.check)
            AnnotationFactory(item=item, levels=check, seconds_spent=seconds)
        return task.participant

    def levels_by_clip(self) -> list[dict]:
        everyone = {"ana": CONSENSUS, "ben": CONSENSUS, "cleo": CLEO, "dan": DAN, "eve": CONSENSUS[:1]}
        return [
            {name: answers[index] for name, answers in everyone.items() if index < len(answers)}
            for index in range(len(CONSENSUS))
        ]


@pytest.fixture
def small():
    return SmallStudy()


def by_annotator_id_of(participant) -> str:
    return opaque_annotator_id(participant.study.slug, participant.prolific_pid)


def rows_by_pid(study):
    return {row.prolific_pid: row for row in participant_review_rows(study=study)}


def test_rows_summarise_each_participant(small):
    rows = rows_by_pid(small.study)
    ana, dan, eve, fay = (rows[p.prolific_pid] for p in (small.ana, small.dan, small.eve, small.fay))

    assert list(rows) == [p.prolific_pid for p in (small.ana, small.ben, small.cleo, small.dan, small.eve, small.fay)]
    assert (ana.clips, ana.checks_passed, ana.checks_total, ana.median_seconds) == (4, 1, 1, 14)
    assert ana.marked_share == pytest.approx(7 / 24)  # the attention check's words are not counted
    assert (dan.checks_passed, dan.checks_total, dan.median_seconds, dan.marked_share) == (0, 1, 1.5, 4 / 24)
    assert (eve.clips, eve.checks_total, eve.attention_share) == (1, 0, None)
    assert (fay.clips, fay.median_seconds, fay.marked_share, fay.kappa, fay.flags) == (0, None, None, None, ())
    assert fay.kappa_reason == "no clips submitted"


def test_kappa_is_leave_one_out_over_the_study_clips(small):
    rows = rows_by_pid(small.study)
    clips = small.levels_by_clip()

    for name in ("ana", "ben", "cleo", "dan"):
        expected = leave_one_out_kappa(name, clips).kappa
        assert rows[getattr(small, name).prolific_pid].kappa == pytest.approx(expected, abs=1e-12), name
    assert rows[small.ana.prolific_pid].kappa > 0.8
    assert rows[small.dan.prolific_pid].kappa < 0
    eve = rows[small.eve.prolific_pid]
    assert eve.kappa is None
    assert eve.kappa_reason == "only 6 words on clips shared with at least 2 others (need 20)"


def test_thresholds_flag_participants(small):
    rows = rows_by_pid(small.study)

    assert rows[small.dan.prolific_pid].flags == (FLAG_ATTENTION, FLAG_KAPPA, FLAG_TOO_QUICK)
    assert [row.flags for row in rows.values()].count(()) == 5
    assert rows[small.dan.prolific_pid].median_time_ratio == 0.75  # 1.5 s on 2 s clips

    small.study.review_min_time_ratio = 5
    slow = {row.prolific_pid: row.flags for row in participant_review_rows(study=small.study)}
    assert slow[small.cleo.prolific_pid] == (FLAG_TOO_QUICK,)  # 9 s on 2 s clips is now too quick
    assert slow[small.ben.prolific_pid] == ()  # 11 s is 5.5 times the clip


def test_too_quick_is_relative_to_the_clips_duration(small):
    # One listen to 2.5 s clips and 1 s to mark the words: not too quick, though under the 3 s of old.
    for clip in small.clips:
        clip.duration = 2.5
        clip.save()
    Annotation.objects.filter(participant=small.ben).update(seconds_spent=3.5)

    ben = rows_by_pid(small.study)[small.ben.prolific_pid]

    assert ben.median_seconds == 3.5 and ben.median_time_ratio == pytest.approx(1.4, abs=1e-12)
    assert FLAG_TOO_QUICK not in ben.flags


def test_the_review_page_shows_the_reports_kappa_for_every_participant(small):
    # What the report leaves out, the review page leaves out too: a clip excluded in review, an
    # answer whose levels do not fit its clip, and a rejected participant as anyone's reference.
    late = small.participant(CONSENSUS, check=CHECK_PASSED, seconds=12)
    excluded = ClipFactory(corpus=small.study.corpus, transcript=WORDS)
    StudyItemFactory(study=small.study, clip=excluded, review=StudyItem.Review.EXCLUDED)
    for person in (small.ana, small.dan, late):
        AnnotationFactory(item=TaskItemFactory(task=person.tasks.first(), clip=excluded), levels=DAN[0])
    Annotation.objects.filter(participant=small.ben, clip=small.clips[1]).update(levels=[0, 1, 5, 0, 0, 0])
    participant_decide(participant=small.cleo, decision="rejected", note=MESSAGE, category="LOW_EFFORT")
    study = small.study
    report = json.loads(agreement_report_compute(study=study, parameters=report_parameters(study=study, resamples=0)))

    reported = {row["annotator"]: row for row in report["annotators"]["rows"]}
    rows = rows_by_pid(study)
    by_annotator_id = {row.annotator_id: row for row in rows.values()}  # the report's names

    assert set(reported) == {by_annotator_id_of(p) for p in (small.ana, small.ben, small.dan, small.eve, late)}
    for pid, row in reported.items():
        review = by_annotator_id[pid]
        assert review.kappa == pytest.approx(row["kappa"], abs=1e-9), pid  # the report rounds to 10 decimals
        assert (review.kappa_reason, review.flags, review.clips) == (
            row["kappa_reason"],
            tuple(row["flags"]),
            row["clips"],
        ), pid
        assert review.marked_share == pytest.approx(row["marked_share"], abs=1e-9)
    assert rows[small.ana.prolific_pid].kappa is not None and rows[small.ben.prolific_pid].clips == 3  # 1 malformed
    assert rows[small.ana.prolific_pid].clips == 4  # not the excluded clip
    cleo = rows[small.cleo.prolific_pid]  # rejected: not in the report, still on the review page
    assert cleo.clips == 4 and cleo.kappa is not None


def test_a_rejected_participant_is_nobodys_reference_but_keeps_a_kappa(small):
    participant_decide(participant=small.ana, decision="rejected", note=MESSAGE, category="LOW_EFFORT")
    clips = small.levels_by_clip()
    without_ana = [{name: levels for name, levels in clip.items() if name != "ana"} for clip in clips]

    rows = rows_by_pid(small.study)

    ben = leave_one_out_kappa("ben", without_ana).kappa
    assert ben != pytest.approx(leave_one_out_kappa("ben", clips).kappa)  # ana's answers tipped ben's majority
    assert rows[small.ben.prolific_pid].kappa == pytest.approx(ben, abs=1e-12)
    assert rows[small.ana.prolific_pid].kappa == pytest.approx(leave_one_out_kappa("ana", clips).kappa, abs=1e-12)


def test_annotations_from_another_study_are_not_the_others(small):
    before = rows_by_pid(small.study)[small.ana.prolific_pid].kappa
    elsewhere = StudyFactory(corpus=small.study.corpus)
    for _ in range(3):
        task = TaskFactory(participant=ParticipantFactory(study=elsewhere))
        AnnotationFactory(item=TaskItemFactory(task=task, clip=small.clips[3]), levels=DAN[0])

    assert rows_by_pid(small.study)[small.ana.prolific_pid].kappa == before


def test_a_fixed_number_of_queries_whatever_the_number_of_participants(small):
    with CaptureQueriesContext(connection) as few:
        participant_review_rows(study=small.study)
    for _ in range(4):
        small.participant(CONSENSUS, check=CHECK_PASSED, seconds=12)
    with CaptureQueriesContext(connection) as more:
        participant_review_rows(study=small.study)

    assert len(more.captured_queries) == len(few.captured_queries) <= 8


# --- decisions ------------------------------------------------------------------


def test_approve_and_set_back_to_pending():
    participant = ParticipantFactory()

    participant_decide(participant=participant, decision="approved", note="good work")
    participant.refresh_from_db()
    assert (participant.decision, participant.decision_note) == ("approved", "good work")

    participant_decide(participant=participant, decision="pending", note="ignored")
    participant.refresh_from_db()
    assert (participant.decision, participant.decision_note) == ("pending", "")


@pytest.mark.parametrize(
    ("category", "message", "error"),
    [
        ("", MESSAGE, "reason categories: TOO_QUICKLY, TOO_SLOWLY"),
        ("FAILED_ATTENTION", MESSAGE, "reason categories"),
        ("FAILED_CHECK", "You failed the check.", "at least 100 characters explaining the reason (.*) has 21"),
        ("FAILED_CHECK", " " * 200, "this one has 0"),
    ],
)
def test_a_rejection_needs_a_category_and_a_long_message(category, message, error):
    participant = ParticipantFactory()

    with pytest.raises(ValueError, match=error):
        participant_decide(participant=participant, decision="rejected", note=message, category=category)

    participant.refresh_from_db()
    assert participant.decision == "pending"


def test_a_rejection_keeps_category_and_message():
    participant = ParticipantFactory()

    participant_decide(participant=participant, decision="rejected", note=MESSAGE, category="FAILED_CHECK")

    participant.refresh_from_db()
    assert participant.decision == "rejected"
    assert rejection_parts(participant.decision_note) == ("FAILED_CHECK", MESSAGE)


def test_asking_to_return_needs_a_reason_and_unknown_decisions_are_refused():
    participant = ParticipantFactory()

    with pytest.raises(ValueError, match="needs a reason"):
        participant_decide(participant=participant, decision="return_requested")
    with pytest.raises(ValueError, match="Unknown decision 'paid'"):
        participant_decide(participant=participant, decision="paid")

    participant_decide(participant=participant, decision="return_requested", note="Didn't finish the study")
    participant.refresh_from_db()
    assert participant.decision_note == "Didn't finish the study"


def test_a_sent_decision_is_final_and_a_batch_is_all_or_nothing():
    sent = ParticipantFactory(decision="approved", decision_sent_at=timezone.now())
    other = ParticipantFactory(study=sent.study)

    with pytest.raises(ValueError, match="already sent to Prolific"):
        participants_decide(participants=[other, sent], decision="rejected", note=MESSAGE, category="LOW_EFFORT")

    other.refresh_from_db()
    sent.refresh_from_db()
    assert (other.decision, sent.decision) == ("pending", "approved")


def test_approved_ids_for_export():
    study = StudyFactory()
    first = ParticipantFactory(study=study, decision="approved")
    ParticipantFactory(study=study, decision="rejected")
    ParticipantFactory(study=study, decision="approved", prolific_pid="")  # a local test run
    last = ParticipantFactory(study=study, decision="approved", decision_sent_at=timezone.now())
    ParticipantFactory(decision="approved")  # another study

    assert approved_prolific_ids(study=study) == [first.prolific_pid, last.prolific_pid]


# --- the admin page -----------------------------------------------------------------


@pytest.fixture
def reviewer(client):
    user = User.objects.create_user("researcher", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="change_participant"))
    client.force_login(user)
    return user


def review_url(study, name="review"):
    return reverse(f"admin:annotation_participant_{name}", args=[study.pk])


def test_staff_without_change_participant_get_403(client, small):
    user = User.objects.create_user("viewer", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_participant"))
    client.force_login(user)

    assert client.get(review_url(small.study)).status_code == 403
    assert client.get(review_url(small.study, "approved_ids")).status_code == 403
    assert client.post(review_url(small.study, "send")).status_code == 403
    decide = client.post(review_url(small.study), {"participants": [small.ana.pk], "decision": "approved"})
    assert decide.status_code == 403
    small.ana.refresh_from_db()
    assert small.ana.decision == "pending"


def test_review_page_lists_participants_and_highlights_flags(client, reviewer, small):
    page = client.get(review_url(small.study)).content.decode()

    for participant in (small.ana, small.dan, small.fay):
        assert participant.prolific_pid in page
    assert page.count('class="num flagged"') == 3  # dan's attention, time and kappa
    assert "5 participants given a task, 1 flagged; 1 more entered without one" in page
    assert 'title="only 6 words on clips shared with at least 2 others (need 20)"' in page
    assert "Set PROLIFIC_API_TOKEN" in page


def test_each_participant_shows_an_id_and_a_status_and_entrants_without_a_task_are_apart(client, reviewer, small):
    study = small.study
    screened = ParticipantFactory(study=study, screened_at=timezone.now(), screened_out=True)
    deaf = ParticipantFactory(study=study, screened_at=timezone.now(), screened_out=True, sound_check_passed=False)
    retrying = ParticipantFactory(study=study, screened_at=timezone.now(), sound_check_passed=False)
    local = ParticipantFactory(study=study, prolific_pid="", screened_at=timezone.now())  # passed, no clip left
    annotating = TaskFactory(participant=ParticipantFactory(study=study)).participant
    expired = TaskFactory(participant=ParticipantFactory(study=study), status="expired").participant
    small.ana.completed_at = timezone.now()
    small.ana.save()

    rows = {row.participant_id: row for row in participant_review_rows(study=study)}
    assert {
        person.pk: (rows[person.pk].status, rows[person.pk].had_task)
        for person in (small.ana, small.fay, screened, deaf, retrying, local, annotating, expired)
    } == {
        small.ana.pk: ("completed", True),
        small.fay.pk: ("consented, not screened", False),
        screened.pk: ("screened out", False),
        deaf.pk: ("failed the sound check", False),
        retrying.pk: ("at the sound check", False),
        local.pk: ("no task", False),
        annotating.pk: ("annotating", True),
        expired.pk: ("task expired", True),
    }
    assert rows[local.pk].shown_id == f"local #{local.pk}"

    page = client.get(review_url(study)).content.decode()
    decisions, apart = page.split('<table id="review">')[1].split("</table>")[0], page.split('id="entrants"')[1]
    assert "7 participants given a task, 1 flagged; 5 more entered without one" in page
    for person in (small.ana, annotating, expired):
        assert person.prolific_pid in decisions and person.prolific_pid not in apart
    for person in (small.fay, screened, deaf, retrying):
        assert person.prolific_pid in apart and person.prolific_pid not in decisions
    assert f"local #{local.pk}" in apart
    for status in ("<td>completed</td>", "<td>annotating</td>", "<td>task expired</td>"):
        assert status in decisions
    for status in ("screened out", "failed the sound check", "at the sound check", "no task"):
        assert f"<td>{status}</td>" in apart


def test_review_page_records_approvals_and_returns(client, reviewer, small):
    url = review_url(small.study)

    response = client.post(url, {"participants": [small.ana.pk, small.ben.pk], "decision": "approved"})
    assert response.status_code == 302
    client.post(
        url,
        {"participants": [small.eve.pk], "decision": "return_requested", "return_reason": "Didn't finish the study"},
    )

    decisions = dict(Participant.objects.filter(study=small.study).values_list("pk", "decision"))
    assert decisions[small.ana.pk] == decisions[small.ben.pk] == "approved"
    assert decisions[small.eve.pk] == "return_requested"
    assert decisions[small.dan.pk] == "pending"


def test_a_short_rejection_message_is_refused_and_kept_for_editing(client, reviewer, small):
    data = {
        "participants": [small.dan.pk],
        "decision": "rejected",
        "rejection_category": "FAILED_CHECK",
        "rejection_message": "Failed the attention check.",
    }

    response = client.post(review_url(small.study), data)

    assert response.status_code == 200
    page = response.content.decode()
    assert "at least 100 characters" in page
    assert "Failed the attention check.</textarea>" in page
    assert f'value="{small.dan.pk}" checked' in page
    small.dan.refresh_from_db()
    assert small.dan.decision == "pending"

    client.post(review_url(small.study), {**data, "rejection_message": MESSAGE})
    small.dan.refresh_from_db()
    assert (small.dan.decision, rejection_parts(small.dan.decision_note)) == ("rejected", ("FAILED_CHECK", MESSAGE))


def test_a_decision_needs_participants_from_this_study(client, reviewer, small):
    stranger = ParticipantFactory()

    response = client.post(review_url(small.study), {"participants": [stranger.pk], "decision": "approved"})

    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert "Tick the participants" in client.post(review_url(small.study), {"decision": "approved"}).content.decode()


def test_export_downloads_approved_prolific_ids(client, reviewer, small):
    participants_decide(participants=[small.ana, small.cleo], decision="approved")

    response = client.get(review_url(small.study, "approved_ids"))

    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert f'filename="{small.study.slug}-approved-prolific-ids.txt"' in response["Content-Disposition"]
    assert response.content.decode() == f"{small.ana.prolific_pid}\n{small.cleo.prolific_pid}\n"


def test_sending_without_a_token_sends_nothing(client, reviewer, small, settings):
    settings.PROLIFIC_API_TOKEN = ""
    participants_decide(participants=[small.ana], decision="approved")

    response = client.post(review_url(small.study, "send"), follow=True)

    assert "PROLIFIC_API_TOKEN is not set" in response.content.decode()
    small.ana.refresh_from_db()
    assert small.ana.decision_sent_at is None
    assert client.get(review_url(small.study, "send")).status_code == 405


def test_participant_changelist_links_to_the_review(client, reviewer, small):
    reviewer.user_permissions.add(Permission.objects.get(codename="view_participant"))
    changelist = reverse("admin:annotation_participant_changelist")

    page = client.get(f"{changelist}?study__id__exact={small.study.pk}").content.decode()

    assert f'href="{review_url(small.study)}">Review participants of {small.study}' in page
    detail = client.get(reverse("admin:annotation_participant_change", args=[small.ana.pk]))
    assert detail.status_code == 200
    assert 'name="decision"' not in detail.content.decode()  # read-only: decisions go through the review page


def test_rejection_parts_refuses_a_note_that_is_not_a_rejection():
    with pytest.raises(ValueError, match="not a recorded rejection"):
        rejection_parts("Didn't finish the study")


def test_entrants_at_or_out_of_the_headphone_check_say_so(client, reviewer, small):
    study, now = small.study, timezone.now()
    out = ParticipantFactory(
        study=study, screened_at=now, screened_out=True, headphone_level_set_at=now, headphone_check_passed=False
    )
    listening = ParticipantFactory(study=study, screened_at=now, headphone_level_set_at=now)

    rows = {row.participant_id: row for row in participant_review_rows(study=study)}
    assert rows[out.pk].status == "failed the headphone check"
    assert rows[listening.pk].status == "at the headphone check"
    apart = client.get(review_url(study)).content.decode().split('id="entrants"')[1]
    assert "<td>failed the headphone check</td>" in apart and "<td>at the headphone check</td>" in apart
