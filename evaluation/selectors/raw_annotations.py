"""A study's raw annotations as plain rows, streamed (an MMEE-sized study has 1.5 M word rows).

Unlike a label set, nothing is chosen or left out: every submitted annotation of every
participant, rejected ones and attention checks included, with the participant's decision and
the attention-check flag so that readers can filter. Annotators appear under the opaque id that
label sets use (evaluation.selectors.label_sets.opaque_annotator_id), or under their Prolific id
when the export asks for it.
"""

import json
from collections.abc import Iterator

from django.db.models import Subquery

from annotation.models import Annotation, Participant, Study, Word
from evaluation.selectors.label_sets import opaque_annotator_id

_CHUNK = 5000


def raw_annotation_count(*, study: Study) -> int:
    return Annotation.objects.filter(participant__study=study).count()


def raw_annotations(*, study: Study, include_prolific_ids: bool = False) -> Iterator[list[dict]]:
    """The rows of each annotation in turn (so that callers can count annotations as they go).
    Emphasis studies: one row per word (RAW_COLUMNS); listening forms: one row per answer
    (FORM_RAW_COLUMNS). Ordered by clip, participant, submission."""
    annotators = _annotators(study, include_prolific_ids)
    if study.kind == Study.Kind.LISTENING_FORM:
        return _form_rows(study, annotators)
    return _word_rows(study, annotators)


def _annotators(study: Study, include_prolific_ids: bool) -> dict[int, tuple[str, str, bool]]:
    """Participant pk -> (annotator id in the export, decision, finished)."""
    participants = Participant.objects.filter(study=study).values_list("pk", "prolific_pid", "decision", "completed_at")
    annotators = {}
    for pk, pid, decision, completed_at in participants:
        key = pid or f"local-{pk}"  # as evaluation.selectors.agreement_reports names annotators
        shown = key if include_prolific_ids else opaque_annotator_id(study.slug, key)
        annotators[pk] = (shown, decision, completed_at is not None)
    return annotators


def _annotations(study: Study):
    return Annotation.objects.filter(participant__study=study).order_by("clip__external_id", "participant_id", "pk")


def _word_rows(study: Study, annotators) -> Iterator[list[dict]]:
    words = _clip_words(study)
    rows = _annotations(study).values_list(
        "participant_id", "clip_id", "clip__external_id", "clip__language", "levels", "mismatch_reported",
        "seconds_spent", "submitted_at", "item__attention_check_id", "attention_passed",
    )  # fmt: skip
    for participant, clip, clip_key, language, levels, mismatch, seconds, submitted, check, passed in rows.iterator(
        chunk_size=_CHUNK
    ):
        annotator, decision, completed = annotators[participant]
        texts = words.get(clip, [])
        yield [
            {
                "study": study.slug, "clip_id": clip_key, "language": language, "annotator": annotator,
                "decision": decision, "completed": int(completed), "attention_check": int(check is not None),
                "attention_passed": None if passed is None else int(passed),
                # a transcript edited after the answer: the level is kept, its word is unknown
                "word_index": index, "word": texts[index] if index < len(texts) else "", "level": level,
                "mismatch_reported": int(mismatch), "seconds_spent": seconds, "submitted_at": submitted.isoformat(),
            }
            for index, level in enumerate(levels or [])
        ]  # fmt: skip


def _clip_words(study: Study) -> dict[int, list[str]]:
    """The words of every clip the study's participants annotated (one list per clip, not per row)."""
    clips = Annotation.objects.filter(participant__study=study).values("clip_id")
    words: dict[int, list[str]] = {}
    rows = Word.objects.filter(clip_id__in=Subquery(clips)).order_by("clip_id", "index").values_list("clip_id", "text")
    for clip, text in rows.iterator(chunk_size=_CHUNK * 4):
        words.setdefault(clip, []).append(text)
    return words


def _form_rows(study: Study, annotators) -> Iterator[list[dict]]:
    rows = _annotations(study).values_list(
        "participant_id", "clip__external_id", "item__study_item__form_item__external_id",
        "item__study_item__form_item__item_type", "item__study_item__form_item__second_clip__external_id",
        "item__study_item__form_item__settings", "item__attention_check_id", "attention_passed", "response", "levels",
        "seconds_spent", "submitted_at",
    )  # fmt: skip
    for (participant, clip_key, item_id, item_type, second_clip, item_settings, check, passed, response, levels,
         seconds, submitted) in rows.iterator(chunk_size=_CHUNK):  # fmt: skip
        annotator, decision, completed = annotators[participant]
        is_check = check is not None or bool((item_settings or {}).get("attention_check"))
        yield [{
            "study": study.slug, "item_id": item_id or "", "item_type": item_type or "", "clip_id": clip_key,
            "second_clip_id": second_clip or "", "annotator": annotator, "decision": decision,
            "completed": int(completed), "attention_check": int(is_check),
            "attention_passed": None if passed is None else int(passed),
            # sort_keys: jsonb hands answers back with its own key order
            "answer": json.dumps(response or {}, sort_keys=True, ensure_ascii=False),
            "levels": json.dumps(levels or []), "seconds_spent": seconds, "submitted_at": submitted.isoformat(),
        }]  # fmt: skip
