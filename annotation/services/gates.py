"""The checks a submission must pass, all on the server: the answer's shape
for the item, the emphasis marking rules, and listening to every clip."""

import math
from dataclasses import replace
from datetime import datetime

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation import playback
from annotation.models import ListeningFormItem
from annotation.refusals import Refused
from annotation.sql.submission_rows import ItemState, StudyRules

LEVELS = (0, 1, 2)


class SubmissionRefused(Refused):
    """Why a submission was not accepted; `reasons` are shown to the participant."""

    def __init__(self, reasons: list[str], *, final: bool = False):
        super().__init__("; ".join(reasons))
        self.reasons = reasons
        self.final = final  # the clip was already submitted with another answer


def max_marks(*, word_count: int, min_marked: int, max_fraction: float | None) -> int:
    """The most words of a clip that may be marked: every word when the study sets no limit
    (max_fraction None). A short clip still allows the minimum, and at least one word:
    30 % of 3 words would forbid marking any."""
    if max_fraction is None:
        return max(min_marked, word_count)
    return max(min_marked, 1, math.floor(max_fraction * word_count + 1e-9))


def marking_rule(*, fewest: int, most: int, word_count: int) -> str:
    """How many words of a clip may be marked, said before the participant starts ("Mark 1 to 3 words")."""
    if most >= word_count and fewest == 0:
        return _("Mark the words the speaker emphasized, if any: leaving every word unmarked is an answer too.")
    if fewest == 0:
        return ngettext(
            "Mark up to %(most)d word the speaker emphasized, or none.",
            "Mark up to %(most)d words the speaker emphasized, or none.",
            most,
        ) % {"most": most}
    if most >= word_count:
        return ngettext(
            "Mark at least %(fewest)d word the speaker emphasized.",
            "Mark at least %(fewest)d words the speaker emphasized.",
            fewest,
        ) % {"fewest": fewest}
    if fewest == most:
        return ngettext(
            "Mark exactly %(most)d word: the one the speaker emphasized most.",
            "Mark exactly %(most)d words: those the speaker emphasized most.",
            most,
        ) % {"most": most}
    return ngettext(
        "Mark %(fewest)d to %(most)d word the speaker emphasized.",
        "Mark %(fewest)d to %(most)d words the speaker emphasized.",
        most,
    ) % {"fewest": fewest, "most": most}


def answer_problems(
    item: ItemState, study: StudyRules, form_item: ListeningFormItem | None, levels, response
) -> list[str]:
    if not study.capabilities.answers_are_choices:
        return _emphasis_problems(item, study, levels)
    if form_item is None:  # every item of a study whose answers are choices has its form item
        raise ValueError(f"task item {item.pk} of a study whose answers are choices has no form item")
    return _form_problems(item, form_item, levels, response)


def _emphasis_problems(item: ItemState, study: StudyRules, levels) -> list[str]:
    if not _levels_ok(levels, item.word_count, LEVELS):
        raise SubmissionRefused(
            [_("Give one level (0, 1 or 2) for each of the %(count)d words.") % {"count": item.word_count}]
        )
    marked = sum(1 for level in levels if level > 0)
    most = max_marks(
        word_count=item.word_count, min_marked=study.min_marked_words, max_fraction=study.max_marked_fraction
    )
    problems = []
    if marked < study.min_marked_words:
        problems.append(
            ngettext(
                "Mark at least %(count)d word as emphasized.",
                "Mark at least %(count)d words as emphasized.",
                study.min_marked_words,
            )
            % {"count": study.min_marked_words}
        )
    if marked > most:
        problems.append(_("Mark at most %(most)d of the %(count)d words.") % {"most": most, "count": item.word_count})
    return problems


def _levels_ok(levels, count: int, allowed) -> bool:
    return (
        isinstance(levels, list)
        and len(levels) == count
        and all(not isinstance(level, bool) and level in allowed for level in levels)
    )


def _form_problems(item: ItemState, form_item: ListeningFormItem, levels, response) -> list[str]:
    """The view's form already checked the answer; this re-checks its meaning,
    so that no caller can store an answer the item does not allow."""
    kind = ListeningFormItem.Type
    ok = {
        kind.SINGLE_CHOICE: lambda: response.get("choice") in range(len(form_item.options)),
        kind.PAIRWISE: lambda: (
            response.get("prefer") in (["a", "b", "none"] if form_item.settings.get("allow_tie") else ["a", "b"])
        ),
        kind.RATING: lambda: _rating_ok(form_item, response.get("value")),
        kind.STANCE: lambda: response.get("pole") in ("P", "N") and _unit(response.get("confidence")),
        kind.STRESSED_WORDS: lambda: _levels_ok(levels, item.word_count, (0, 1)),
    }[kind(form_item.item_type)]
    return [] if ok() else [_("Please answer the question.")]


def _rating_ok(form_item: ListeningFormItem, value) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if form_item.options:
        return value in (form_item.settings.get("values") or range(1, len(form_item.options) + 1))
    return 0 <= value <= 100


def _unit(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1


def playback_verdicts(
    item, study, now: datetime, events: list[tuple[int, playback.Event]], handed_out: datetime | None = None
) -> list[playback.Verdict]:
    """One verdict per clip the item plays (two for an A/B pair), from its
    (track, event) playback reports, timed from `handed_out` (when the server
    handed the item out; by default its receipt of the first report). The
    clips of a pair are heard one after the other: the time since the hand-out
    must cover both."""
    durations = item.presentation.get("durations") or [item.duration]
    start = handed_out.timestamp() if handed_out else min((e.received_seconds for _, e in events), default=None)
    verdicts = [
        playback.verify(
            [event for track, event in events if track == index],
            duration=duration,
            now_seconds=now.timestamp(),
            required_coverage=study.required_coverage,
            handed_out_seconds=start,
        )
        for index, duration in enumerate(durations)
    ]
    if len(verdicts) == 1:
        return verdicts
    required = sum(verdict.required_wall_seconds for verdict in verdicts)
    return [replace(verdict, required_wall_seconds=required) for verdict in verdicts]


def playback_problems(verdicts: list[playback.Verdict]) -> list[str]:
    several = len(verdicts) > 1
    problems = []
    for index, verdict in enumerate(verdicts):
        which = (_("the first clip"), _("the second clip"))[index] if several else _("the whole clip")
        if not verdict.coverage_ok:
            played = round(100 * verdict.coverage)
            problems.append(
                _("Listen to %(which)s first (played so far: %(played)d %%).") % {"which": which, "played": played}
            )
        elif not verdict.wall_time_ok:
            problems.append(_("Listen to %(which)s first.") % {"which": which})
    return problems
