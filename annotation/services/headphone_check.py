"""The headphone check in a participant's way through a study: the level set by the reference
noise, then each of the study's tests (Huggins pitch, then antiphase tones), a fixed number of
trials a try and of tries a test. The sounds are annotation/headphone_stimuli.py's.

Where a participant stands is read from their answers (HeadphoneTrial rows), so nothing but the
answers and the verdict is stored. Each trial's sounds are made from a seed that is a keyed hash
under the server's secret key, so that neither the participant nor anyone reading the published
code can tell from what they hold which interval is the target; the answer is checked here.
"""

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from annotation import headphone_stimuli
from annotation.models import HeadphoneTrial, Participant
from annotation.services.participants import participant_screen_out

_SEED_SALT = "annotation.headphone-check.seed"


@dataclass(frozen=True)
class Position:
    """The trial a participant is to answer next."""

    test: str
    attempt: int  # from 0
    trial: int  # from 0
    test_number: int  # from 1, of tests_total
    tests_total: int


@dataclass(frozen=True)
class Attempt:
    test: str
    attempt: int
    answered: int
    correct: int


def headphone_level_set(*, participant: Participant) -> None:
    """The participant has set their volume by the reference noise (the first time counts)."""
    Participant.objects.filter(pk=participant.pk, headphone_level_set_at__isnull=True).update(
        headphone_level_set_at=timezone.now()
    )


def headphone_check_position(participant: Participant) -> Position | None:
    """The next trial to answer, or None when every test is passed or one is failed for good."""
    study = participant.study
    tests = study.headphone_tests
    attempts = _attempts(participant)
    for number, test in enumerate(tests, start=1):
        if _passed(study, test, attempts):
            continue
        finished = _finished(study, test, attempts)
        if len(finished) >= study.headphone_check_tries:
            return None
        current = len(finished)
        answered = next((a.answered for a in attempts if (a.test, a.attempt) == (test, current)), 0)
        return Position(test, current, answered, number, len(tests))
    return None


def _attempts(participant: Participant) -> list[Attempt]:
    rows: dict[tuple[str, int], tuple[int, int]] = {}  # (test, attempt) -> (answered, right)
    for test, attempt, correct in HeadphoneTrial.objects.filter(participant=participant).values_list(
        "test", "attempt", "correct"
    ):
        answered, right = rows.get((test, attempt), (0, 0))
        rows[(test, attempt)] = (answered + 1, right + int(correct))
    return [Attempt(test, attempt, answered, right) for (test, attempt), (answered, right) in sorted(rows.items())]


def _finished(study, test: str, attempts: list[Attempt]) -> list[Attempt]:
    return [a for a in attempts if a.test == test and a.answered >= study.headphone_check_trials]


def _passed(study, test: str, attempts: list[Attempt]) -> bool:
    return any(
        study.headphone_try_passed(test, answered=a.answered, correct=a.correct) for a in attempts if a.test == test
    )


def trial_seed(participant: Participant, test: str, attempt: int, trial: int) -> str:
    """The seed a trial's sounds are made from: a keyed hash under SECRET_KEY of who, which test,
    try and trial. The access key makes it differ between databases that reuse primary keys."""
    message = f"{participant.pk}:{participant.access_key}:{test}:{attempt}:{trial}"
    return salted_hmac(_SEED_SALT, message, algorithm="sha256").hexdigest()


def trial_target(participant: Participant, position: Position) -> int:
    return headphone_stimuli.target_interval(trial_seed(participant, position.test, position.attempt, position.trial))


def headphone_answer(*, participant: Participant, test: str, attempt: int, trial: int, answer: int) -> str:
    """Record the answer to the trial the page showed (test, attempt, trial) and say what follows:
    "next" (another trial), "retry" (a try failed, another begins), "passed" (every test passed),
    "failed" (out of tries: screened out, unless the study only records the result), or "stale"
    (that trial is not the one due, e.g. an answer sent twice: nothing is recorded)."""
    if answer not in range(headphone_stimuli.INTERVALS):
        raise ValueError(f"an answer is an interval, 0 to {headphone_stimuli.INTERVALS - 1}")
    with transaction.atomic():
        participant = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
        position = headphone_check_position(participant)
        if participant.headphone_check_passed is not None or position is None:
            return "stale"
        if (position.test, position.attempt, position.trial) != (test, attempt, trial):
            return "stale"
        target = trial_target(participant, position)
        try:
            with transaction.atomic():
                HeadphoneTrial.objects.create(
                    participant=participant,
                    test=test,
                    attempt=attempt,
                    trial=trial,
                    target=target,
                    answer=answer,
                    correct=answer == target,
                )
        except IntegrityError:
            # The same answer twice at once: PostgreSQL's row lock makes the second find it stale above;
            # SQLite has no row locks, and the unique constraint refuses it here.
            return "stale"
        return _after_answer(participant, position)


def headphone_check_settle(*, participant: Participant) -> str | None:
    """Decide the check of a participant with nothing left to answer although it is undecided: the
    study's settings changed while they were at it (a test dropped, fewer tries or trials). "passed"
    or "failed" by the settings as they are now; None when a trial is due or it is decided."""
    with transaction.atomic():
        participant = Participant.objects.select_for_update().select_related("study").get(pk=participant.pk)
        if participant.headphone_check_passed is not None or headphone_check_position(participant) is not None:
            return None
        return _decided(participant)


def _after_answer(participant: Participant, answered: Position) -> str:
    following = headphone_check_position(participant)
    if following is not None:
        retry = following.test == answered.test and following.attempt > answered.attempt
        return "retry" if retry else "next"
    return _decided(participant)


def _decided(participant: Participant) -> str:
    """Store the verdict of a check with nothing left to answer, screening out who failed."""
    study = participant.study
    attempts = _attempts(participant)
    passed = all(_passed(study, test, attempts) for test in study.headphone_tests)
    Participant.objects.filter(pk=participant.pk).update(headphone_check_passed=passed)
    participant.headphone_check_passed = passed
    if passed:
        return "passed"
    if study.headphone_check_screens_out:
        participant_screen_out(participant=participant)
    return "failed"
