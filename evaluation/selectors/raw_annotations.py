"""A study's raw annotations as plain rows, streamed (an MMEE-sized study has 1.5 M word rows),
and its participants, one row each (raw_participants).

Unlike a label set, nothing is chosen or left out: every submitted annotation of every
participant, rejected ones and attention checks included, with the participant's decision and
the attention-check flag so that readers can filter. Annotators appear under the opaque id that
reports and label sets use (annotation.participant_names); an export that asks for Prolific ids
adds each participant's display name in a `participant` column beside it.
"""

import json
from collections.abc import Iterator

from django.db.models import Subquery

from annotation.models import Annotation, Participant, Study, Word
from annotation.participant_names import participant_annotator_id, participant_display_name
from annotation.selectors.headphone_results import participant_headphone_results

_CHUNK = 5000
PARTICIPANT_COLUMN = "participant"  # exports with Prolific ids only


def raw_annotation_count(*, study: Study) -> int:
    return Annotation.objects.filter(participant__study=study).count()


def raw_annotations(*, study: Study, include_prolific_ids: bool = False) -> Iterator[list[dict]]:
    """The rows of each annotation in turn (so that callers can count annotations as they go).
    Emphasis studies: one row per word (RAW_COLUMNS); listening forms: one row per answer
    (FORM_RAW_COLUMNS). Ordered by clip, participant, submission."""
    annotators = _annotators(study, include_prolific_ids)
    if study.capabilities.answers_are_choices:
        return _form_rows(study, annotators)
    return _word_rows(study, annotators)


def _annotators(study: Study, include_prolific_ids: bool) -> dict[int, tuple[dict, str, bool]]:
    """Participant pk -> (the row's annotator fields, decision, finished)."""
    participants = Participant.objects.filter(study=study).values_list("pk", "prolific_pid", "decision", "completed_at")
    annotators = {}
    for pk, pid, decision, completed_at in participants:
        names = {"annotator": participant_annotator_id(study_slug=study.slug, participant_pk=pk, prolific_pid=pid)}
        if include_prolific_ids:
            names[PARTICIPANT_COLUMN] = participant_display_name(participant_pk=pk, prolific_pid=pid)
        annotators[pk] = (names, decision, completed_at is not None)
    return annotators


def raw_participants(*, study: Study, include_prolific_ids: bool = False) -> list[dict]:
    """Every participant of the study in the order they came (PARTICIPANT_TABLE_COLUMNS), with how
    they got through consent, the screening questions, the sound check and the headphone check."""
    annotators = _annotators(study, include_prolific_ids)
    headphones = {person.participant_id: person for person in participant_headphone_results(study=study)}
    participants = Participant.objects.filter(study=study).order_by("created_at", "pk")
    rows = participants.values_list("pk", "screened_out", "created_at", "screening_answers", "sound_check_passed")
    table = []
    for pk, screened_out, created_at, answers, sound_check in rows:
        names, decision, completed = annotators[pk]
        person = headphones[pk]
        scores = {
            test: ";".join(f"{score}/{study.headphone_check_trials}" for score in result.scores())
            for test, result in person.tests.items()
        }
        table.append(
            {
                "study": study.slug,
                **names,
                "decision": decision,
                "completed": int(completed),
                "screened_out": int(screened_out),
                "entered_at": created_at.isoformat(),
                # sort_keys: jsonb hands answers back with its own key order
                "screening_answers": json.dumps(answers or {}, sort_keys=True, ensure_ascii=False),
                "sound_check_passed": None if sound_check is None else int(sound_check),
                "headphone_check": study.headphone_check,
                "headphone_level_set": int(person.level_set),
                "headphone_check_passed": None if person.passed is None else int(person.passed),
                "huggins_scores": scores.get("huggins", ""),
                "antiphase_scores": scores.get("antiphase", ""),
                "headphone_self_report": person.self_report,
                "headphone_trials": json.dumps(person.trial_rows(), ensure_ascii=False, separators=(",", ":")),
            }
        )
    return table


def _annotations(study: Study):
    return Annotation.objects.filter(participant__study=study).order_by("clip__external_id", "participant_id", "pk")


def _word_rows(study: Study, annotators) -> Iterator[list[dict]]:
    words = _clip_words(study)
    rows = _annotations(study).values_list(
        "participant_id",
        "clip_id",
        "clip__external_id",
        "clip__language",
        "levels",
        "mismatch_reported",
        "seconds_spent",
        "submitted_at",
        "item__attention_check_id",
        "attention_passed",
    )
    for participant, clip, clip_key, language, levels, mismatch, seconds, submitted, check, passed in rows.iterator(
        chunk_size=_CHUNK
    ):
        annotator, decision, completed = annotators[participant]
        texts = words.get(clip, [])
        yield [
            {
                "study": study.slug,
                "clip_id": clip_key,
                "language": language,
                **annotator,
                "decision": decision,
                "completed": int(completed),
                "attention_check": int(check is not None),
                "attention_passed": None if passed is None else int(passed),
                # a transcript edited after the answer: the level is kept, its word is unknown
                "word_index": index,
                "word": texts[index] if index < len(texts) else "",
                "level": level,
                "mismatch_reported": int(mismatch),
                "seconds_spent": seconds,
                "submitted_at": submitted.isoformat(),
            }
            for index, level in enumerate(levels or [])
        ]


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
        "participant_id",
        "clip__external_id",
        "item__study_item__form_item__external_id",
        "item__study_item__form_item__item_type",
        "item__study_item__form_item__second_clip__external_id",
        "item__study_item__form_item__settings",
        "item__attention_check_id",
        "attention_passed",
        "response",
        "levels",
        "seconds_spent",
        "submitted_at",
    )
    for (
        participant,
        clip_key,
        item_id,
        item_type,
        second_clip,
        item_settings,
        check,
        passed,
        response,
        levels,
        seconds,
        submitted,
    ) in rows.iterator(chunk_size=_CHUNK):
        annotator, decision, completed = annotators[participant]
        is_check = check is not None or bool((item_settings or {}).get("attention_check"))
        yield [
            {
                "study": study.slug,
                "item_id": item_id or "",
                "item_type": item_type or "",
                "clip_id": clip_key,
                "second_clip_id": second_clip or "",
                **annotator,
                "decision": decision,
                "completed": int(completed),
                "attention_check": int(is_check),
                "attention_passed": None if passed is None else int(passed),
                # sort_keys: jsonb hands answers back with its own key order
                "answer": json.dumps(response or {}, sort_keys=True, ensure_ascii=False),
                "levels": json.dumps(levels or []),
                "seconds_spent": seconds,
                "submitted_at": submitted.isoformat(),
            }
        ]
