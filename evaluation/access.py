"""Access checks for evaluation's own objects, on the same rule as annotation/access.py
(403 before 404; the helper returns the object or raises). Studies are looked up
with annotation.access.get_study_for_staff."""

from django.shortcuts import get_object_or_404

from annotation.access import require_perm
from evaluation.models import AgreementReport, CastSet, DatasetExport, LabelSet, ListeningFormReport, SuiteReport


def get_agreement_report_for_staff(request, pk: int, *, perm: str, status: str | None = None) -> AgreementReport:
    """The report `pk` with its study (in `status`, when given: a report in another state is 404 too)."""
    require_perm(request, perm)
    lookup = {"pk": pk} if status is None else {"pk": pk, "status": status}
    return get_object_or_404(AgreementReport.objects.select_related("study"), **lookup)


def get_listening_form_report_for_staff(request, pk: int, *, perm: str) -> ListeningFormReport:
    """The listening-form report `pk`, whatever its state."""
    require_perm(request, perm)
    return get_object_or_404(ListeningFormReport, pk=pk)


def get_label_set_for_staff(request, pk: int, *, perm: str) -> LabelSet:
    """The label set `pk`, whatever its state."""
    require_perm(request, perm)
    return get_object_or_404(LabelSet, pk=pk)


def get_export_for_staff(request, pk: int, *, perm: str | tuple[str, ...], status: str | None = None) -> DatasetExport:
    """The dataset export `pk` (in `status`, when given: an export in another state is 404 too)."""
    require_perm(request, perm)
    lookup = {"pk": pk} if status is None else {"pk": pk, "status": status}
    return get_object_or_404(DatasetExport.objects.select_related("label_set", "study"), **lookup)


def get_suite_report_for_staff(request, pk: int, *, perm: str) -> SuiteReport:
    """The suite report `pk`, whatever its state."""
    require_perm(request, perm)
    return get_object_or_404(SuiteReport, pk=pk)


def get_cast_set_for_staff(request, pk: int, *, perm: str) -> CastSet:
    """The CAST set `pk`."""
    require_perm(request, perm)
    return get_object_or_404(CastSet, pk=pk)
