"""One row per participant of a study, for the researcher's review. A fixed number of queries.

The figures are the agreement report's annotator quality (evaluation.stats.quality), computed on
the annotations the report reads (annotation.selectors.study_data.study_data: clips excluded
in review and annotations whose levels do not fit their clip left out, a clip answered twice by the
same participant counted once) with the study's review thresholds (study_thresholds), so that a
participant shows the same kappa and the same flags here and in the report. Rejected participants
are in neither the report nor anyone's reference majority; their own rows still show their figures,
their kappa against the majority of the participants who are not rejected.

- clips: clips answered, attention checks not counted;
- attention: checks passed / checks answered;
- median seconds per clip, and median time over the clip's duration: over every clip answered,
  checks included (time is effort either way);
- marked share: words marked 1 or 2 over all words answered, checks excluded;
- kappa: leave-one-out kappa against the majority of the study's other annotators of the same
  clips, or None with the reason;
- flags: the names of the thresholds crossed (evaluation.stats.quality.FLAG_DESCRIPTIONS);
- status: where the participant got to (participant_status); those never given a task (screened
  out, failed the sound check, left before the task) have nothing to decide on, and the review
  page lists them apart.

Why the review page is annotation's, though it shows agreement statistics: it decides on
annotation's participants and sends the decisions to Prolific, and what it reads of the database
(study_data) is annotation's rows; the statistics are the pure evaluation.stats, which any floor may
use (docs/development.md). The page so stays beside the participants, the agreement report can
leave out whom it rejects, and nothing on the ground floor imports evaluation's Django code.

A listening-form study has no words to agree on: each answer is a "clip" of no words (so no kappa),
an answer to an attention-check item is a check, and time is compared with the item's audio.
"""

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from annotation.models import Annotation, Participant, Study, Task
from annotation.participant_names import annotator_key, opaque_annotator_id, participant_display_name
from annotation.selectors.study_data import study_data, study_thresholds
from evaluation.stats.quality import AnnotatorQuality, annotator_quality
from evaluation.stats.study_data import StudyData

FLAG_ATTENTION = "min_attention"
FLAG_KAPPA = "min_kappa"
FLAG_TOO_QUICK = "min_time_ratio"
FLAG_LABELS = {
    FLAG_ATTENTION: "attention checks",
    FLAG_KAPPA: "agreement",
    FLAG_TOO_QUICK: "too quick",
    "min_median_seconds": "too quick",
    "max_marked_share": "marks too many words",
}


@dataclass(frozen=True)
class ReviewRow:
    participant_id: int
    prolific_pid: str
    annotator_id: str  # the opaque id the study's reports, label sets and exports name them by
    prolific_session_id: str
    clips: int
    checks_passed: int
    checks_total: int
    median_seconds: float | None
    marked_share: float | None
    kappa: float | None
    kappa_reason: str
    flags: tuple[str, ...]
    decision: str
    decision_note: str
    decision_sent_at: datetime | None
    completed_at: datetime | None
    median_time_ratio: float | None = None
    status: str = ""
    had_task: bool = True
    entered_at: datetime | None = None

    @property
    def shown_id(self) -> str:
        """The Prolific id, or the platform's own for a participant who came without one."""
        return participant_display_name(participant_pk=self.participant_id, prolific_pid=self.prolific_pid)

    @property
    def attention_share(self) -> float | None:
        return self.checks_passed / self.checks_total if self.checks_total else None

    @property
    def flag_labels(self) -> list[str]:
        return [FLAG_LABELS[flag] for flag in self.flags]

    @property
    def decision_label(self) -> str:
        return Participant.Decision(self.decision).label


def participant_review_rows(*, study: Study) -> list[ReviewRow]:
    participants = list(
        Participant.objects.filter(study=study)
        .only(
            "prolific_pid",
            "prolific_session_id",
            "decision",
            "decision_note",
            "decision_sent_at",
            "completed_at",
            "created_at",
            "screened_at",
            "screened_out",
            "sound_check_passed",
            "headphone_level_set_at",
            "headphone_check_passed",
        )
        .order_by("created_at", "pk")
    )
    quality = _quality_by_key(study, participants)
    latest = _latest_task_status(study)
    rows = []
    for person in participants:
        key = annotator_key(person.pk, person.prolific_pid)
        rows.append(_row(person, opaque_annotator_id(study.slug, key), quality.get(key), latest.get(person.pk)))
    return rows


def _latest_task_status(study: Study) -> dict[int, str]:
    """participant id -> the status of their latest task (none for those never given one)."""
    rows = Task.objects.filter(study=study).order_by("created_at", "pk").values_list("participant_id", "status")
    return dict(rows)  # in order: each participant's latest task is written last


def participant_status(participant: Participant, task_status: str | None) -> str:
    """Where the participant got to, in the reviewer's words; `task_status`: their latest task's."""
    if participant.completed_at is not None:
        return "completed"
    if task_status is not None:
        return {Task.Status.OPEN.value: "annotating", Task.Status.EXPIRED.value: "task expired"}.get(
            task_status, "completed"
        )
    if participant.screened_out:  # by an answer to screening, or out of tries at a check
        # The sound check comes after the headphone check, which a study may only record: who
        # failed both was screened out by the sound check.
        if participant.sound_check_passed is False:
            return "failed the sound check"
        return "failed the headphone check" if participant.headphone_check_passed is False else "screened out"
    if participant.headphone_level_set_at is not None and participant.headphone_check_passed is None:
        return "at the headphone check"
    if participant.sound_check_passed is False:
        return "at the sound check"
    if participant.screened_at is None:
        return "consented, not screened"
    return "no task"


def _quality_by_key(study: Study, participants: list[Participant]) -> dict[str, AnnotatorQuality]:
    word_marks = study.capabilities.answers_are_word_marks
    data = study_data(study=study, include_rejected=True) if word_marks else _form_data(study)
    rejected = {
        annotator_key(person.pk, person.prolific_pid)
        for person in participants
        if person.decision == Participant.Decision.REJECTED
    }
    reference = np.array([key not in rejected for key in data.annotator_keys], dtype=bool)
    rows = annotator_quality(data, study_thresholds(study=study), reference=reference)
    return {row.annotator: row for row in rows}


def _form_data(study: Study) -> StudyData:
    """A listening-form study's answers as StudyData: one wordless "clip" per answered task item."""
    rows = Annotation.objects.filter(participant__study=study).values_list(
        "participant_id", "participant__prolific_pid", "item_id", "seconds_spent", "item__duration", "attention_passed"
    )
    clips: dict[str, dict] = {}
    answers: list[tuple] = []
    checks: list[tuple] = []
    for participant, prolific_pid, item, seconds, duration, passed in rows.iterator():
        name = annotator_key(participant, prolific_pid)
        if passed is None:
            clips[f"item-{item}"] = {"words": 0, "duration": duration}
            answers.append((f"item-{item}", name, [], False, seconds))
        else:
            checks.append((name, passed, seconds, duration))
    return StudyData.build(study=study.slug, clips=clips, annotations=answers, checks=checks)


def _row(participant: Participant, name: str, quality: AnnotatorQuality | None, task_status: str | None) -> ReviewRow:
    return ReviewRow(
        participant_id=participant.pk,
        prolific_pid=participant.prolific_pid,
        annotator_id=name,
        prolific_session_id=participant.prolific_session_id,
        clips=quality.clips if quality else 0,
        checks_passed=quality.checks_passed if quality else 0,
        checks_total=quality.checks_total if quality else 0,
        median_seconds=quality.median_seconds if quality else None,
        marked_share=quality.marked_share if quality else None,
        kappa=quality.kappa if quality else None,
        kappa_reason=quality.kappa_reason if quality else "no clips submitted",
        flags=quality.flags if quality else (),
        decision=participant.decision,
        decision_note=participant.decision_note,
        decision_sent_at=participant.decision_sent_at,
        completed_at=participant.completed_at,
        median_time_ratio=quality.median_time_ratio if quality else None,
        status=participant_status(participant, task_status),
        had_task=task_status is not None,
        entered_at=participant.created_at,
    )
