"""The headphone check's results: each participant's (the exports' participant table, the groups
the agreement report compares) and a study's summary (the study page and the agreement report,
rendered by one template, admin/annotation/_headphone_results.html).

A test is passed in a try that got at least its pass mark right of all its trials
(Study.headphone_try_passed, the rule the check itself applies), and failed once every try has
ended below it; each is judged by the study's settings as they are now.
The self-reported headphone question is the default screening question (HEADPHONE_QUESTION), found
by its text in any shipped language.
"""

from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext_noop

from annotation.models import HeadphoneTrial, Participant, PrerequisiteQuestion, Study
from annotation.participant_names import annotator_key

HEADPHONE_QUESTION = gettext_noop("Are you wearing headphones or earphones now?")
TEST_LABELS = dict(HeadphoneTrial.Test.choices)
TEST_ORDER = ("huggins", "antiphase")  # the order a study with both takes them (Study.headphone_tests)


@dataclass
class TestResult:
    """One participant's answers to one test, by try: each try a list of (target, answer, correct)."""

    test: str
    tries: list[list[tuple[int, int, bool]]] = field(default_factory=list)

    def scores(self) -> list[int]:
        return [sum(correct for _, _, correct in answers) for answers in self.tries]

    def verdict(self, study: Study) -> str:
        """passed, failed or in_progress."""
        if self.passed_on_try(study) is not None:
            return "passed"
        finished = [answers for answers in self.tries if len(answers) >= study.headphone_check_trials]
        return "failed" if len(finished) >= study.headphone_check_tries else "in_progress"

    def passed_on_try(self, study: Study) -> int | None:
        """The try (from 1) that passed, if any."""
        for number, (answers, score) in enumerate(zip(self.tries, self.scores()), start=1):
            if study.headphone_try_passed(self.test, answered=len(answers), correct=score):
                return number
        return None


@dataclass
class ParticipantHeadphoneResult:
    participant_id: int
    annotator_key: str
    level_set: bool
    passed: bool | None  # the stored verdict: None until decided
    self_report: str | None  # their answer to the headphone question; None when not asked or unanswered
    tests: dict[str, TestResult]

    @property
    def took_part(self) -> bool:
        return self.level_set or bool(self.tests)

    def trial_rows(self) -> list[dict]:
        """Every answer, in order: test, try and trial (from 1), the interval to find and the one chosen (1-3)."""
        return [
            {"test": test, "try": t, "trial": n, "target": target + 1, "answer": answer + 1, "correct": int(correct)}
            for test, result in sorted(self.tests.items(), key=lambda item: TEST_ORDER.index(item[0]))
            for t, answers in enumerate(result.tries, start=1)
            for n, (target, answer, correct) in enumerate(answers, start=1)
        ]


def headphone_question_texts() -> set[str]:
    texts = set()
    for code, _ in settings.LANGUAGES:
        with translation.override(code):
            texts.add(translation.gettext(HEADPHONE_QUESTION))
    return texts


def self_report_question(study: Study) -> PrerequisiteQuestion | None:
    texts = headphone_question_texts()
    return next((question for question in study.prerequisites.all() if question.text in texts), None)


def participant_headphone_results(*, study: Study) -> list[ParticipantHeadphoneResult]:
    """Every participant of the study, in the order they came, with their headphone check."""
    question = self_report_question(study)
    participants = Participant.objects.filter(study=study).order_by("created_at", "pk")
    rows = participants.values_list(
        "pk", "prolific_pid", "headphone_level_set_at", "headphone_check_passed", "screening_answers"
    )
    trials = _trials_by_participant(study)
    results = []
    for pk, prolific_pid, level_set_at, passed, answers in rows:
        results.append(
            ParticipantHeadphoneResult(
                participant_id=pk,
                annotator_key=annotator_key(pk, prolific_pid),
                level_set=level_set_at is not None,
                passed=passed,
                self_report=(answers or {}).get(question.text) if question is not None else None,
                tests=trials.get(pk, {}),
            )
        )
    return results


def _trials_by_participant(study: Study) -> dict[int, dict[str, TestResult]]:
    rows = (
        HeadphoneTrial.objects.filter(participant__study=study)
        .order_by("participant_id", "test", "attempt", "trial")
        .values_list("participant_id", "test", "attempt", "target", "answer", "correct")
    )
    by_participant: dict[int, dict[str, TestResult]] = {}
    for participant, test, attempt, target, answer, correct in rows.iterator():
        result = by_participant.setdefault(participant, {}).setdefault(test, TestResult(test))
        while len(result.tries) <= attempt:
            result.tries.append([])
        result.tries[attempt].append((target, answer, correct))
    return by_participant


def headphone_results(*, study: Study, people: list[ParticipantHeadphoneResult] | None = None) -> dict:
    """The study's summary, as plain data (it is stored in agreement reports): who took the check,
    passed, failed or is still at it; each test's first-try scores, the try it was passed on, and
    how many answered each trial right; and the check beside the self-reported headphone question."""
    if people is None:
        people = participant_headphone_results(study=study)
    tests = list(study.headphone_tests)
    tests += sorted({test for person in people for test in person.tests} - set(tests))  # the setting changed
    checked = [person for person in people if person.took_part]
    return {
        "setting": study.headphone_check,
        "setting_label": study.get_headphone_check_display(),
        "trials": study.headphone_check_trials,
        "tries": study.headphone_check_tries,
        "screens_out": study.headphone_check_screens_out,
        "participants": {
            "took": len(checked),
            "passed": sum(person.passed is True for person in checked),
            "failed": sum(person.passed is False for person in checked),
            "in_progress": sum(person.passed is None for person in checked),
        },
        "tests": [_test_summary(study, test, people) for test in tests],
        "self_report": _self_report(study, people),
    }


def _test_summary(study: Study, test: str, people: list[ParticipantHeadphoneResult]) -> dict:
    results = [person.tests[test] for person in people if test in person.tests]
    verdicts = Counter(result.verdict(study) for result in results)
    trials = study.headphone_check_trials
    passed_on = Counter(result.passed_on_try(study) for result in results)
    first_scores = Counter(result.scores()[0] for result in results if result.tries and len(result.tries[0]) >= trials)
    answered, right = [0] * trials, [0] * trials
    for result in results:
        for answers in result.tries:
            for position, (_, _, correct) in enumerate(answers[:trials]):
                answered[position] += 1
                right[position] += int(correct)
    return {
        "test": test,
        "label": TEST_LABELS.get(test, test),
        "pass_mark": study.headphone_pass_mark(test),
        "took": len(results),
        "passed": verdicts["passed"],
        "failed": verdicts["failed"],
        "in_progress": verdicts["in_progress"],
        "passed_on_try": [passed_on[number] for number in range(1, study.headphone_check_tries + 1)],
        "first_try_scores": [first_scores[score] for score in range(trials + 1)],
        "by_trial": [
            {
                "trial": n + 1,
                "answered": answered[n],
                "correct": right[n],
                "share": right[n] / answered[n] if answered[n] else None,
            }
            for n in range(trials)
        ],
    }


def _self_report(study: Study, people: list[ParticipantHeadphoneResult]) -> dict | None:
    """The headphone check against the answer to the headphone question, where both are asked."""
    question = self_report_question(study)
    if question is None:
        return None
    answers = [*question.choices, *sorted({p.self_report for p in people if p.self_report} - set(question.choices))]
    rows = []
    for answer in answers:
        group = [person for person in people if person.self_report == answer]
        rows.append(
            {
                "answer": answer,
                "accepted": answer in question.accepted,
                "participants": len(group),
                "passed": sum(person.passed is True for person in group),
                "failed": sum(person.passed is False for person in group),
                "in_progress": sum(person.passed is None and person.took_part for person in group),
                "not_checked": sum(not person.took_part for person in group),
            }
        )
    return {"question": question.text, "rows": rows}
