"""Counts of the rows that point at a study, as subquery annotations of the study rows, so a page
of studies with their counts is one query (the study admin's list and the API's progress).

`studies_with_counts` is the one place the counts get their names; the admin's columns and the
API's progress (annotation.selectors.study_progress) both read them.
"""

from django.db.models import Count, IntegerField, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce

from annotation.models import Participant, StudyItem


def per_study(queryset, **aggregate):
    """One aggregate of the rows of `queryset` that point at the study, 0 when there are none."""
    ((name, expression),) = aggregate.items()
    rows = queryset.filter(study=OuterRef("pk")).order_by().values("study").annotate(**{name: expression})
    return Coalesce(Subquery(rows.values(name)[:1], output_field=IntegerField()), 0)


def studies_with_counts(studies):
    """The studies with clip_count (clips in the study), clips_to_review (out of assignment,
    awaiting mismatch review), annotations_done (annotations submitted for its clips) and
    participants_total (everyone who entered)."""
    return studies.annotate(
        clip_count=per_study(StudyItem.objects, n=Count("pk")),
        clips_to_review=per_study(StudyItem.objects.filter(review=StudyItem.Review.NEEDS_REVIEW), n=Count("pk")),
        annotations_done=per_study(StudyItem.objects, n=Sum("completed_count")),
        participants_total=per_study(Participant.objects, n=Count("pk")),
    )
