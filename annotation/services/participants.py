"""A participant's way through a study: entry, consent, screening, headphone check
(annotation.services.headphone_check), sound check, task, completion. `next_step` is the one
place that decides where a participant belongs; every page sends them there if they are elsewhere."""

import re

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import tones
from annotation.models import Participant, PrerequisiteQuestion, Study, Task
from annotation.refusals import Refused

# Prolific's participant, study and session ids are 24 hexadecimal characters.
PROLIFIC_ID = re.compile(r"[0-9a-f]{24}")


class EntryRefused(Refused, ValueError):
    """The study link is malformed or the study is not open; shown to the person."""


def entry_check(
    *, study: Study, prolific_pid: str | None, prolific_study_id: str | None, session_id: str | None
) -> None:
    """EntryRefused, saying why, for a link that cannot be used: a study not yet
    started, or ids that are not Prolific's."""
    if study.status == Study.Status.DRAFT:
        raise EntryRefused(_("This study has not started yet."))
    if prolific_pid is None:
        if prolific_study_id or session_id:
            raise EntryRefused(_("The link has STUDY_ID or SESSION_ID but no PROLIFIC_PID."))
        return
    for name, value in (("PROLIFIC_PID", prolific_pid), ("STUDY_ID", prolific_study_id), ("SESSION_ID", session_id)):
        if value is not None and not PROLIFIC_ID.fullmatch(value):
            raise EntryRefused(
                _("The link's %(name)s (%(value)s) is not a Prolific id (24 hexadecimal characters).")
                % {"name": name, "value": repr(value[:40])}
            )


def participant_returning(
    *, study: Study, known: Participant | None, prolific_pid: str | None, session_id: str | None
) -> Participant | None:
    """Who opens the study link again, if anyone: the participant this browser
    already is (`known`) unless the link names another Prolific id, else the
    participant of the link's Prolific id (from any browser); None for a newcomer,
    whose row is made only at consent (participant_enter)."""
    if known is not None and known.study_id == study.pk and prolific_pid in (None, known.prolific_pid):
        return known
    if prolific_pid is None:
        return None
    participant = Participant.objects.filter(study=study, prolific_pid=prolific_pid).first()
    if participant is not None and session_id and participant.prolific_session_id != session_id:
        Participant.objects.filter(pk=participant.pk).update(prolific_session_id=session_id)
        participant.prolific_session_id = session_id
    return participant


def participant_enter(
    *, study: Study, prolific_pid: str | None, prolific_study_id: str | None, session_id: str | None
) -> Participant:
    """The participant for a Prolific link (the same one on every return), or a
    new local participant when no Prolific id is given. Called at consent."""
    entry_check(study=study, prolific_pid=prolific_pid, prolific_study_id=prolific_study_id, session_id=session_id)
    if prolific_pid is None:
        return Participant.objects.create(study=study)
    return _prolific_participant(study, prolific_pid, prolific_study_id or "", session_id or "")


def _prolific_participant(study: Study, pid: str, study_id: str, session_id: str) -> Participant:
    try:
        with transaction.atomic():
            participant, created = Participant.objects.get_or_create(
                study=study,
                prolific_pid=pid,
                defaults={"prolific_study_id": study_id, "prolific_session_id": session_id},
            )
    except IntegrityError:  # the same person opened the link twice at once
        participant, created = Participant.objects.get(study=study, prolific_pid=pid), False
    if not created and session_id and participant.prolific_session_id != session_id:
        Participant.objects.filter(pk=participant.pk).update(prolific_session_id=session_id)
        participant.prolific_session_id = session_id
    return participant


def next_step(participant: Participant, *, has_open_task: bool | None = None) -> str:
    """The step the participant belongs on. `has_open_task`, when the caller has just read the
    participant's open task (the task page), saves asking the database again."""
    study = participant.study
    if participant.completed_at:
        return "done"
    if participant.screened_out:
        return "screened_out"
    if participant.consented_at is None:
        return "consent"
    if participant.screened_at is None and study.prerequisites.exists():
        return "screening"
    if headphone_check_due(participant):
        return "headphone_level" if participant.headphone_level_set_at is None else "headphone_check"
    if study.sound_check and not participant.sound_check_passed:
        return "sound_check"
    if has_open_task is None:
        has_open_task = participant.tasks.filter(status=Task.Status.OPEN).exists()
    if has_open_task:
        return "task"
    if participant.tasks.exists() and not study.allow_repeat_tasks:
        return "ended"
    return "instructions"


def headphone_check_due(participant: Participant) -> bool:
    """Whether the headphone check stands between the participant and the task: the study asks for
    one and it is not decided. Someone who already had a task (the check was turned on later) is not
    sent back to it."""
    if participant.study.headphone_check == Study.HeadphoneCheck.NONE:
        return False
    return participant.headphone_check_passed is None and not participant.tasks.exists()


def participant_consent(*, participant: Participant) -> None:
    Participant.objects.filter(pk=participant.pk, consented_at__isnull=True).update(consented_at=timezone.now())


def participant_screen_out(*, participant: Participant) -> None:
    """Take the participant out of the study for good, e.g. when they refuse consent:
    from now on next_step sends them to the thank-you page with the screen-out code.
    (Failing the screening questions or the sound check screens out in
    participant_screen and sound_check_answer, with the answers they record; failing the headphone
    check, in headphone_answer, through this.)"""
    Participant.objects.filter(pk=participant.pk, screened_out=False).update(screened_out=True)
    participant.screened_out = True


def participant_screen(*, participant: Participant, answers: dict[int, str]) -> bool:
    """Record the answers; screen the participant out unless every answer qualifies."""
    questions = list(PrerequisiteQuestion.objects.filter(study_id=participant.study_id))
    qualified = all(answers.get(question.pk) in question.accepted for question in questions)
    Participant.objects.filter(pk=participant.pk).update(
        screening_answers={question.text: answers.get(question.pk) for question in questions},
        screened_at=timezone.now(),
        screened_out=not qualified,
    )
    return qualified


def sound_check_seed(participant: Participant) -> str:
    return f"{participant.access_key}:{participant.sound_check_attempts}"


def sound_check_answer(*, participant: Participant, count: int) -> str:
    """'passed', 'retry' or 'failed' (out of tries: screened out)."""
    with transaction.atomic():
        participant = Participant.objects.select_for_update().get(pk=participant.pk)
        if participant.sound_check_passed:
            return "passed"
        correct = count == tones.tone_count(sound_check_seed(participant))
        participant.sound_check_attempts += 1
        tries_left = participant.study.sound_check_tries - participant.sound_check_attempts
        participant.sound_check_passed = correct
        participant.screened_out = not correct and tries_left <= 0
        participant.save(update_fields=["sound_check_attempts", "sound_check_passed", "screened_out"])
    if correct:
        return "passed"
    return "retry" if tries_left > 0 else "failed"
