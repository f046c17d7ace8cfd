"""How far a study has got, as the study admin lists it: clips, annotations, participants.

A participant's status is where they stand: `completed` (they reached the end), `screened_out`
(refused by a screening question or the sound check), or `in_progress` (neither, yet).
The annotations endpoint filters by the same statuses.

The counts are subqueries of the study rows (as annotation.admin.study does for its list), so
a page of studies with their progress is one query.
"""

from django.db.models import Case, CharField, Count, F, Q, Sum, Value, When

from annotation.models import Participant, StudyItem
from annotation.selectors.study_counts import per_study

PARTICIPANT_STATUSES = {
    "completed": {"completed_at__isnull": False},
    "screened_out": {"completed_at__isnull": True, "screened_out": True},
    "in_progress": {"completed_at__isnull": True, "screened_out": False},
}
DECISIONS = Participant.Decision.values


def participant_status_q(status: str, *, through: str = "") -> Q:
    """The participants in `status`; `through` is the path to the participant, e.g. "participant__"."""
    return Q(**{through + lookup: value for lookup, value in PARTICIPANT_STATUSES[status].items()})


def participant_status_expression(*, through: str = "") -> Case:
    """The status as an annotation, e.g. of each annotation's participant."""
    whens = [When(participant_status_q(name, through=through), then=Value(name)) for name in PARTICIPANT_STATUSES]
    return Case(*whens, output_field=CharField())


def studies_with_progress(studies):
    participants = {f"participants_{name}": participant_status_q(name) for name in PARTICIPANT_STATUSES}
    decisions = {f"decision_{name}": Q(decision=name) for name in DECISIONS}
    counts = {
        name: per_study(Participant.objects.filter(condition), n=Count("pk"))
        for name, condition in {**participants, **decisions}.items()
    }
    return studies.annotate(
        clip_count=per_study(StudyItem.objects, n=Count("pk")),
        clips_to_review=per_study(StudyItem.objects.filter(review=StudyItem.Review.NEEDS_REVIEW), n=Count("pk")),
        annotations_done=per_study(StudyItem.objects, n=Sum("completed_count")),
        participants_total=per_study(Participant.objects, n=Count("pk")),
        **counts,
    ).annotate(annotations_target=F("clip_count") * F("target_annotations"))
