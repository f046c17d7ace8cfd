"""How far a study has got, as the study admin lists it: clips, annotations, participants.

A participant's status is where they stand: `completed` (they reached the end), `screened_out`
(refused by a screening question or the sound check), or `in_progress` (neither, yet).
The annotations endpoint filters by the same statuses.

The counts are subqueries of the study rows, named once in annotation.selectors.study_counts (the
study admin's list reads the same), so a page of studies with their progress is one query.
"""

from django.db.models import Case, CharField, Count, F, Q, Value, When

from annotation.models import Participant
from annotation.selectors.study_counts import per_study, studies_with_counts

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
    """The studies with their counts (annotation.selectors.study_counts), the participants by
    status and by decision, and the annotations targeted."""
    participants = {f"participants_{name}": participant_status_q(name) for name in PARTICIPANT_STATUSES}
    decisions = {f"decision_{name}": Q(decision=name) for name in DECISIONS}
    counts = {
        name: per_study(Participant.objects.filter(condition), n=Count("pk"))
        for name, condition in {**participants, **decisions}.items()
    }
    return (
        studies_with_counts(studies)
        .annotate(**counts)
        .annotate(annotations_target=F("clip_count") * F("target_annotations"))
    )
