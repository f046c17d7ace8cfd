"""Database rows to the arrays of evaluation.stats.study_data, and the fingerprint of a study's annotations.

What a report (and a label set, and the participant review page) covers: the study's clips (its
StudyItems) except those a researcher excluded in review; every annotation of those clips by the
study's participants except those a researcher rejected (the review page asks for them too, to show
their own figures); attention-check answers apart, with their clips' durations. Rows that cannot be
used are left out and counted in StudyData.notes:
- every annotation of a rejected participant (unless asked for);
- an annotation whose number of levels differs from its clip's number of words, or with a level
  outside 0-2;
- a participant's second annotation of a clip (the first submitted is kept).

Identifiers are stable across databases: clips by external id (unique in the study's corpus),
annotators by their annotator key (annotation.participant_names.annotator_key: the Prolific id, or
"local-<pk>"). The key never leaves the process: what a report, a label set or an export shows is the
opaque annotator id made from it (opaque_annotator_id), the one every artefact of the study uses.
The key, not the id, orders the annotators and seeds the subsample, so that the figures do not
depend on how annotators are shown.
"""

import hashlib
from collections import Counter

from django.db.models import Count, Max

from annotation.models import Annotation, Clip, Participant, Study, StudyItem, Word
from annotation.participant_names import annotator_key
from evaluation.stats.quality import Thresholds
from evaluation.stats.study_data import StudyData


def study_thresholds(*, study: Study) -> Thresholds:
    """The study's review thresholds: what the review page flags, and the reports' defaults."""
    return Thresholds(
        min_kappa=study.review_min_kappa,
        min_attention=study.review_min_attention,
        min_time_ratio=study.review_min_time_ratio,
    )


def study_data(*, study: Study, language: str | None = None, include_rejected: bool = False) -> StudyData:
    excluded = set(
        StudyItem.objects.filter(study=study, review=StudyItem.Review.EXCLUDED).values_list("clip_id", flat=True)
    )
    clips_qs = Clip.objects.filter(study_items__study=study).exclude(pk__in=excluded)
    if language is not None:
        clips_qs = clips_qs.filter(language=language)
    clip_rows = clips_qs.annotate(word_count=Count("words", distinct=True)).values_list(
        "pk", "external_id", "language", "variety", "emotion", "word_count", "duration"
    )
    clips = {
        pk: (key, {"words": words, "language": lang, "variety": variety, "emotion": emotion, "duration": length})
        for pk, key, lang, variety, emotion, words, length in clip_rows
    }
    for pk, texts in _word_texts(clips_qs).items():
        clips[pk][1]["texts"] = texts
    names = _annotator_names(study)
    rejected = set() if include_rejected else _rejected(study)
    notes: Counter = Counter()
    seen: set[tuple[int, int]] = set()
    annotations = []
    rows = Annotation.objects.filter(participant__study=study, item__attention_check__isnull=True)
    if language is not None:
        rows = rows.filter(clip__language=language)
    values = rows.order_by("submitted_at", "pk").values_list(
        "participant_id", "clip_id", "levels", "mismatch_reported", "seconds_spent"
    )
    for participant, clip, levels, mismatch, seconds in values.iterator(chunk_size=5000):
        if participant in rejected:
            notes["annotations of rejected participants"] += 1
            continue
        if clip not in clips:
            notes[
                "annotations of clips excluded in review"
                if clip in excluded
                else "annotations of clips that are not in the study"
            ] += 1
            continue
        key, meta = clips[clip]
        if not _valid(levels, meta["words"]):
            notes["annotations whose levels do not match the clip's words"] += 1
            continue
        if (participant, clip) in seen:
            notes["repeated annotations of a clip by the same participant (first kept)"] += 1
            continue
        seen.add((participant, clip))
        annotations.append((key, names[participant], levels, mismatch, seconds))
    annotators = {row[1] for row in annotations}
    checks = [
        (names[participant], passed is True, seconds, duration)
        for participant, passed, seconds, duration in Annotation.objects.filter(
            participant__study=study, item__attention_check__isnull=False
        ).values_list("participant_id", "attention_passed", "seconds_spent", "clip__duration")
        if participant not in rejected and (language is None or names[participant] in annotators)
    ]
    return StudyData.build(
        study=study.slug,
        clips=dict(clips.values()),
        annotations=annotations,
        checks=checks,
        notes=dict(notes.items()),
    )


def _word_texts(clips_qs) -> dict[int, list[str]]:
    """Each clip's word texts in order (for the report's per-word figures), in one query."""
    texts: dict[int, list[str]] = {}
    rows = Word.objects.filter(clip__in=clips_qs.values("pk")).order_by("clip_id", "index")
    for clip, text in rows.values_list("clip_id", "text").iterator(chunk_size=20000):
        texts.setdefault(clip, []).append(text)
    return texts


def annotations_fingerprint(*, study: Study) -> str:
    """Changes whenever an annotation of the study is added or removed, a clip is excluded in
    review, or a participant is rejected or no longer rejected."""
    summary = Annotation.objects.filter(participant__study=study).aggregate(
        count=Count("pk"), last_id=Max("pk"), last_at=Max("submitted_at")
    )
    excluded = StudyItem.objects.filter(study=study, review=StudyItem.Review.EXCLUDED)
    excluded_ids = ",".join(str(pk) for pk in sorted(excluded.values_list("clip_id", flat=True)))
    last_at = summary["last_at"].isoformat() if summary["last_at"] else "-"
    rejected_ids = ",".join(str(pk) for pk in sorted(_rejected(study)))
    excluded_digest = hashlib.sha256(excluded_ids.encode()).hexdigest()[:16]
    rejected_digest = hashlib.sha256(rejected_ids.encode()).hexdigest()[:16]
    # `names=opaque`: reports computed when they showed Prolific ids are out of date.
    return (
        f"annotations={summary['count']};last_id={summary['last_id']};last_at={last_at};"
        f"excluded={excluded_digest};rejected={rejected_digest};names=opaque"
    )


def study_languages(*, study: Study) -> list[str]:
    return sorted(set(Clip.objects.filter(study_items__study=study).values_list("language", flat=True)))


def _rejected(study: Study) -> set[int]:
    return set(study.participants.filter(decision=Participant.Decision.REJECTED).values_list("pk", flat=True))


def _annotator_names(study: Study) -> dict[int, str]:
    participants = Participant.objects.filter(study=study).values_list("pk", "prolific_pid")
    return {pk: annotator_key(pk, pid) for pk, pid in participants}


def _valid(levels, words: int) -> bool:
    return (
        isinstance(levels, list)
        and len(levels) == words
        and all(isinstance(level, int) and not isinstance(level, bool) and 0 <= level <= 2 for level in levels)
    )
