"""Creating studies from a selection of a corpus, and changing their state."""

import math
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import translation
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation import headphone_stimuli
from annotation.models import Clip, Corpus, PrerequisiteQuestion, Study, StudyItem
from annotation.selectors.headphone_results import HEADPHONE_QUESTION
from annotation.services.adaptive import PROBABILISTIC_MODES


@dataclass(frozen=True)
class ClipSelection:
    """Which clips of a corpus a study covers; empty criteria select everything."""

    languages: list[str] = field(default_factory=list)
    varieties: list[str] = field(default_factory=list)
    emotions: list[str] = field(default_factory=list)
    speakers: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    clip_ids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {name: value for name, value in self.__dict__.items() if value}


def clips_selected(*, corpus: Corpus, selection: ClipSelection):
    clips = Clip.objects.filter(corpus=corpus)
    if selection.languages:
        clips = clips.filter(language__in=selection.languages)
    if selection.varieties:
        clips = clips.filter(variety__in=selection.varieties)
    if selection.emotions:
        clips = clips.filter(emotion__in=selection.emotions)
    if selection.speakers:
        clips = clips.filter(speaker__name__in=selection.speakers)
    if selection.clip_ids:
        clips = clips.filter(external_id__in=selection.clip_ids)
    if selection.tags:
        # Tags live in a JSON list, which SQLite cannot query by element; the
        # candidates are few enough (one corpus) to filter here.
        wanted = set(selection.tags)
        ids = [pk for pk, tags in clips.values_list("pk", "tags") if wanted & set(tags or [])]
        clips = Clip.objects.filter(pk__in=ids)
    return clips.order_by("pk")


# Languages that write language names in lower case mid-sentence ("el español").
_LOWERCASE_LANGUAGE_NAMES = {"es", "pt", "fr", "it"}


# Spoken languages Django names only by their script ("zh-hans"), or not at all.
_SPOKEN_NAMES = {"zh": gettext_lazy("Chinese"), "cmn": gettext_lazy("Mandarin Chinese")}


def language_name(code: str) -> str:
    """'pt-BR' -> 'Portuguese (pt-BR)', in the active language ('portugués (pt-BR)' in Spanish)."""
    if not code:
        return _("the study language")
    base = code.replace("_", "-").split("-")[0].lower()
    try:
        name = str(
            _SPOKEN_NAMES[base] if base in _SPOKEN_NAMES else translation.get_language_info(base)["name_translated"]
        )
    except KeyError:
        return code
    if translation.get_language() in _LOWERCASE_LANGUAGE_NAMES:
        name = name[:1].lower() + name[1:]
    return name if code.lower() == base else f"{name} ({code})"


def interface_language_for(code: str) -> str:
    """The shipped interface language closest to a clip language, else English."""
    from django.conf import settings

    shipped = {language for language, _ in settings.LANGUAGES}
    base = code.replace("_", "-").split("-")[0].lower()
    if base in ("zh", "cmn") and "zh-hans" in shipped:
        return "zh-hans"
    return base if base in shipped else "en"


def default_prerequisites(language: str, interface_language: str = "en") -> list[dict]:
    """The MMEE prerequisites, written in the participants' interface language."""
    with translation.override(interface_language):
        yes, no = _("Yes"), _("No")
        spoken = language_name(language)
        return [
            {
                "text": _("Is %(language)s your first language, and do you speak it fluently?") % {"language": spoken},
                "choices": [yes, no],
                "accepted": [yes],
            },
            {"text": _("Do you have any hearing difficulties?"), "choices": [no, yes], "accepted": [no]},
            {"text": _(HEADPHONE_QUESTION), "choices": [yes, no], "accepted": [yes]},
        ]


@transaction.atomic
def study_create(*, name: str, corpus: Corpus, selection: ClipSelection, **settings) -> Study:
    """A draft study over the selected clips, with the default screening questions and, unless
    settings say otherwise, the Huggins-pitch headphone check."""
    clip_ids = list(clips_selected(corpus=corpus, selection=selection).values_list("pk", flat=True))
    if not clip_ids:
        raise ValueError(f"No clip of corpus {corpus.name!r} matches {selection.as_dict() or 'the selection'}")
    language = settings.pop("language", None) or _single_language(clip_ids)
    # New emphasis studies check for headphones with the more selective of the two tests (Milne et al. 2021).
    settings.setdefault("headphone_check", Study.HeadphoneCheck.HUGGINS)
    study = Study.objects.create(
        name=name,
        slug=settings.pop("slug", None) or free_slug(name),
        corpus=corpus,
        selection=selection.as_dict(),
        language=language,
        **settings,
    )
    StudyItem.objects.bulk_create([StudyItem(study=study, clip_id=pk) for pk in clip_ids], batch_size=1000)
    PrerequisiteQuestion.objects.bulk_create(
        PrerequisiteQuestion(study=study, position=position, **question)
        for position, question in enumerate(default_prerequisites(language, study.interface_language))
    )
    return study


# A participant hears each clip about twice and then marks it; consent, screening and the
# instructions come first. Figures from piloting the demo study; a study's own pilot says better.
PLAYS_PER_CLIP = 2
MARKING_SECONDS_PER_CLIP = 10
ENTRY_SECONDS = 120


# The headphone check: the level page, then each trial's three sounds and their gaps, and a few
# seconds to answer (one try; Milne et al. time their test at under 3 minutes).
HEADPHONE_LEVEL_SECONDS = 30
HEADPHONE_ANSWER_SECONDS = 3


def task_minutes_estimate(study: Study) -> int:
    """How long a task of `study` takes, in whole minutes rounded up, from its clips' mean duration
    and its headphone check."""
    durations = list(study.items.values_list("clip__duration", flat=True))
    mean = sum(durations) / len(durations) if durations else 0.0
    clips = study.clips_per_task + study.attention_checks_per_task
    seconds = ENTRY_SECONDS + clips * (PLAYS_PER_CLIP * mean + MARKING_SECONDS_PER_CLIP)
    return max(1, math.ceil((seconds + headphone_check_seconds(study)) / 60))


def headphone_check_seconds(study: Study) -> float:
    if not study.headphone_tests:
        return 0.0
    seconds: float = HEADPHONE_LEVEL_SECONDS
    for test in study.headphone_tests:
        sounds = headphone_stimuli.INTERVALS * headphone_stimuli.interval_seconds(test)
        gaps = (headphone_stimuli.INTERVALS - 1) * headphone_stimuli.gap_seconds(test)
        seconds += study.headphone_check_trials * (sounds + gaps + HEADPHONE_ANSWER_SECONDS)
    return seconds


def studies_create_per_language(*, corpus: Corpus, by: str = "language", **settings) -> list[Study]:
    """One draft study per language (or regional variety) of the corpus, each
    with its own prerequisites, completion code and interface language."""
    if by not in ("language", "variety"):
        raise ValueError("studies are split by 'language' or 'variety'")
    values = sorted(set(Clip.objects.filter(corpus=corpus).exclude(**{by: ""}).values_list(by, flat=True)))
    studies = []
    with transaction.atomic():
        for value in values:
            selection = ClipSelection(languages=[value]) if by == "language" else ClipSelection(varieties=[value])
            studies.append(
                study_create(
                    name=f"{corpus.name} – {value}",
                    corpus=corpus,
                    selection=selection,
                    language=value,
                    interface_language=settings.get("interface_language") or interface_language_for(value),
                    **{key: val for key, val in settings.items() if key != "interface_language"},
                )
            )
    return studies


def _single_language(clip_ids: list[int]) -> str:
    languages = set(Clip.objects.filter(pk__in=clip_ids).values_list("language", flat=True))
    return languages.pop() if len(languages) == 1 else ""


def free_slug(name: str) -> str:
    base = slugify(name)[:60] or "study"
    slug, suffix = base, 2
    while Study.objects.filter(slug=slug).exists():
        slug, suffix = f"{base}-{suffix}", suffix + 1
    return slug


# Which states a study may be set to from which: reopening a closed study is
# allowed (for a top-up); going back to draft only while nobody has entered.
REACHABLE_FROM = {
    Study.Status.LIVE: {Study.Status.DRAFT, Study.Status.PAUSED, Study.Status.CLOSED},
    Study.Status.PAUSED: {Study.Status.LIVE},
    Study.Status.CLOSED: {Study.Status.LIVE, Study.Status.PAUSED},
    Study.Status.DRAFT: {Study.Status.LIVE, Study.Status.PAUSED, Study.Status.CLOSED},
}


def study_status_refusal(*, study: Study, status: str) -> str:
    """Why the study may not be set to `status`, or "" when it may."""
    if status not in Study.Status.values:
        return f"unknown study status {status!r}"
    if study.status == status:
        return f"already {status}"
    if study.status not in REACHABLE_FROM[Study.Status(status)]:
        return f"a {study.status} study cannot be set {status}"
    if status == Study.Status.DRAFT and study.participants.exists():
        return "participants have entered it"
    if status == Study.Status.LIVE and study.scale == Study.Scale.BINARY:
        # The task pages mark three levels; a binary study holds annotations imported from elsewhere.
        return "a binary study holds imported annotations; its participants cannot be shown the task"
    if status == Study.Status.LIVE:
        return _not_ready_reason(study)
    return ""


def _not_ready_reason(study: Study) -> str:
    """What a study lacks to be shown to participants: the attention checks it
    asks for, and consent text (in its interface language, the one it offers)."""
    if study.capabilities.checks_are_items:
        checks = study.form_items.filter(settings__attention_check=True).count()
    else:
        checks = study.attention_checks.count()
    if checks < study.attention_checks_per_task:
        return (
            f"it asks for {study.attention_checks_per_task} attention check(s) per task but has {checks}; "
            "add them on its page or ask for fewer"
        )
    doubled = check_clips_among_study_clips(study)
    if doubled:
        return (
            f"attention check clip(s) {', '.join(doubled)} are also among the study's clips, which would never "
            "be handed out for annotation; choose other clips for the checks"
        )
    if not study.consent_text.strip():
        return f"it has no consent text for its participants ({study.get_interface_language_display()})"
    return ""


def study_setting_warnings(*, study: Study) -> list[str]:
    """Settings that are allowed but rarely meant: shown on the study's admin page and when it is set live."""
    if not study.capabilities.answers_are_word_marks:
        return []
    warnings = []
    clips = study.items.count()
    if 0 < clips < study.clips_per_task:
        warnings.append(
            f"Tasks ask for {study.clips_per_task} clips but the study has {clips}: every task will hold "
            f"all {clips} (fewer as clips reach their target of {study.target_annotations} annotations). "
            f"Set clips per task to {clips} or fewer if that is not what you mean."
        )
    return warnings + _ignored_adaptive_settings(study)


def _ignored_adaptive_settings(study: Study) -> list[str]:
    """Adaptive settings given a value that the study's design never reads."""
    mode, design = study.adaptive_mode, study.get_adaptive_mode_display().split(":")[0]
    ignored = []
    if study.adaptive_predictor != Study.Predictor.BETA_BINOMIAL and mode not in PROBABILISTIC_MODES:
        ignored.append("the predictor of further marks (probabilistic stopping and reallocation only)")
    if study.adaptive_scalar_se is not None and mode in (Study.Adaptive.FIXED, Study.Adaptive.ALLOCATE):
        ignored.append("the scalar standard-error bound (stopping only: exact, probabilistic and reallocation)")
    return [f"The adaptive design is {design.lower()}, which ignores {setting}." for setting in ignored]


def study_status_set(*, study: Study, status: str) -> Study:
    refusal = study_status_refusal(study=study, status=status)
    if refusal:
        raise ValueError(refusal)
    Study.objects.filter(pk=study.pk).update(status=status)
    study.status = status
    return study


def check_clips_among_study_clips(study: Study) -> list[str]:
    """External ids of the attention checks' clips that are also clips of the study (refused since
    issue 33, AttentionCheck.clean; a study made before may still hold one)."""
    if study.capabilities.checks_are_items:
        return []
    return sorted(
        study.attention_checks.filter(clip__study_items__study=study).values_list("clip__external_id", flat=True)
    )
