"""One row per participant of a study, for the researcher's review. Two queries per study.

- clips: clips submitted, attention checks not counted;
- attention: checks passed / checks submitted;
- median seconds per clip: over every clip submitted, checks included (time is effort either way);
- marked share: words marked 1 or 2 over all words submitted, checks excluded;
- kappa: leave-one-out kappa against the majority of the study's other annotators of the
  same clips (evaluation.stats.annotator_quality), or None with the reason;
- flags: the names of the Study thresholds the row falls below.
"""

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from annotation.models import Annotation, Participant, Study
from evaluation.stats.annotator_quality import MIN_OTHERS, MIN_WORDS, KappaResult, leave_one_out_kappas

FLAG_ATTENTION = "review_min_attention"
FLAG_KAPPA = "review_min_kappa"
FLAG_SECONDS = "review_min_seconds_per_clip"
FLAG_LABELS = {FLAG_ATTENTION: "attention checks", FLAG_KAPPA: "agreement", FLAG_SECONDS: "too quick"}


@dataclass(frozen=True)
class ReviewRow:
    participant_id: int
    prolific_pid: str
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

    @property
    def attention_share(self) -> float | None:
        return self.checks_passed / self.checks_total if self.checks_total else None

    @property
    def flag_labels(self) -> list[str]:
        return [FLAG_LABELS[flag] for flag in self.flags]

    @property
    def decision_label(self) -> str:
        return Participant.Decision(self.decision).label


@dataclass
class _Tally:
    clips: int = 0
    words: int = 0
    marked: int = 0
    checks_passed: int = 0
    checks_total: int = 0
    seconds: list[float] = field(default_factory=list)


def participant_review_rows(
    *, study: Study, min_others: int = MIN_OTHERS, min_words: int = MIN_WORDS
) -> list[ReviewRow]:
    tallies: dict[int, _Tally] = defaultdict(_Tally)
    clips: dict[int, dict[int, list[int]]] = defaultdict(dict)
    annotations = (
        Annotation.objects.filter(participant__study=study)
        .order_by("submitted_at", "pk")
        .values_list(
            "participant_id", "clip_id", "levels", "attention_passed", "seconds_spent", "item__attention_check_id"
        )
    )
    for participant_id, clip_id, levels, passed, seconds, check_id in annotations.iterator():
        tally = tallies[participant_id]
        tally.seconds.append(seconds)
        if check_id is not None:
            tally.checks_total += 1
            tally.checks_passed += passed is True
            continue
        tally.clips += 1
        tally.words += len(levels)
        tally.marked += sum(1 for level in levels if level >= 1)
        clips[clip_id].setdefault(participant_id, levels)  # a repeated clip counts once, as first given
    kappas = leave_one_out_kappas(clips.values(), min_others=min_others, min_words=min_words)
    participants = (
        Participant.objects.filter(study=study)
        .only("prolific_pid", "prolific_session_id", "decision", "decision_note", "decision_sent_at", "completed_at")
        .order_by("created_at", "pk")
    )
    return [_row(person, tallies[person.pk], kappas.get(person.pk), study) for person in participants]


def _row(participant: Participant, tally: _Tally, kappa: KappaResult | None, study: Study) -> ReviewRow:
    median = statistics.median(tally.seconds) if tally.seconds else None
    attention = tally.checks_passed / tally.checks_total if tally.checks_total else None
    return ReviewRow(
        participant_id=participant.pk,
        prolific_pid=participant.prolific_pid,
        prolific_session_id=participant.prolific_session_id,
        clips=tally.clips,
        checks_passed=tally.checks_passed,
        checks_total=tally.checks_total,
        median_seconds=median,
        marked_share=tally.marked / tally.words if tally.words else None,
        kappa=kappa.kappa if kappa else None,
        kappa_reason=kappa.reason if kappa else "no clips submitted",
        flags=_flags(study, attention, kappa.kappa if kappa else None, median),
        decision=participant.decision,
        decision_note=participant.decision_note,
        decision_sent_at=participant.decision_sent_at,
        completed_at=participant.completed_at,
    )


def _flags(study: Study, attention: float | None, kappa: float | None, median: float | None) -> tuple[str, ...]:
    crossed = [
        (FLAG_ATTENTION, attention is not None and attention < study.review_min_attention),
        (FLAG_KAPPA, kappa is not None and kappa < study.review_min_kappa),
        (FLAG_SECONDS, median is not None and median < study.review_min_seconds_per_clip),
    ]
    return tuple(name for name, below in crossed if below)
