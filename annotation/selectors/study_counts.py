"""Counts of the rows that point at a study, as subquery annotations of the study rows, so a page
of studies with their counts is one query (the study admin's list and the API's progress)."""

from django.db.models import IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce


def per_study(queryset, **aggregate):
    """One aggregate of the rows of `queryset` that point at the study, 0 when there are none."""
    ((name, expression),) = aggregate.items()
    rows = queryset.filter(study=OuterRef("pk")).order_by().values("study").annotate(**{name: expression})
    return Coalesce(Subquery(rows.values(name)[:1], output_field=IntegerField()), 0)
