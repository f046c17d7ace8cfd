"""One clip of a study, word by word: each annotator's level of every word, for the agreement
report's drill-down (its page and the API).

The annotations are those a report reads (annotation.selectors.study_data): the study's
participants, attention checks and rejected participants apart, the first submission of each
participant kept. Annotators are named by their opaque annotator id; `named` adds the display name
(the Prolific id), which only holders of annotation.change_participant may see
(annotation.participant_names.sees_prolific_ids).
"""

from dataclasses import dataclass, field

from annotation.models import Annotation, Clip, Participant, Study
from annotation.participant_names import participant_annotator_id, participant_display_name


@dataclass(frozen=True)
class ClipMarks:
    clip: Clip
    words: list[str]
    annotations: list[dict] = field(default_factory=list)  # annotator, [participant], levels, mismatch, seconds


def clip_marks(*, study: Study, external_id: str, named: bool) -> ClipMarks | None:
    """None when the study has no such clip."""
    clip = Clip.objects.filter(study_items__study=study, external_id=external_id).first()
    if clip is None:
        return None
    words = list(clip.words.order_by("index").values_list("text", flat=True))
    rows = (
        Annotation.objects.filter(participant__study=study, clip=clip, item__attention_check__isnull=True)
        .exclude(participant__decision=Participant.Decision.REJECTED)
        .order_by("submitted_at", "pk")
        .values_list("participant_id", "participant__prolific_pid", "levels", "mismatch_reported", "seconds_spent")
    )
    seen, annotations = set(), []
    for participant, pid, levels, mismatch, seconds in rows:
        if participant in seen:
            continue  # the first submission counts, as in the report
        seen.add(participant)
        row = {
            "annotator": participant_annotator_id(study_slug=study.slug, participant_pk=participant, prolific_pid=pid),
            "levels": list(levels),
            "mismatch_reported": bool(mismatch),
            "seconds": seconds,
        }
        if named:
            row["participant"] = participant_display_name(participant_pk=participant, prolific_pid=pid)
        annotations.append(row)
    annotations.sort(key=lambda row: str(row["annotator"]))
    return ClipMarks(clip, words, annotations)
