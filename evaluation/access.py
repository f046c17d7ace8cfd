"""Access checks for evaluation's own objects, on the same rule as annotation/shared/access.py
(403 before 404; the helper returns the object or raises). Studies are looked up
with annotation.shared.access.get_study_for_staff."""

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from annotation.shared.access import require_perm
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


def export_read_perms(*, label_set: bool, study: bool, include_prolific_ids: bool) -> list[str]:
    """What reading an export's contents needs besides the export permission: an export copies
    what it holds, so asking for one and downloading one check the same."""
    perms = []
    if label_set:
        perms.append("evaluation.view_labelset")
    if study:
        perms.append("annotation.view_annotation")
    if include_prolific_ids:
        perms.append("annotation.change_participant")  # who may see and decide on participants
    return perms


def may_download_export(user, export: DatasetExport) -> bool:
    perms = export_read_perms(
        label_set=export.label_set_id is not None,
        study=export.study_id is not None,
        include_prolific_ids=export.include_prolific_ids,
    )
    return user.has_perm("evaluation.view_datasetexport") and all(user.has_perm(perm) for perm in perms)


def get_export_for_download(request, pk: int) -> DatasetExport:
    """The export `pk`, in whatever state, for one who may read what it holds (403 otherwise)."""
    export = get_export_for_staff(request, pk, perm="evaluation.view_datasetexport")
    if not may_download_export(request.user, export):
        raise PermissionDenied
    return export


def get_suite_report_for_staff(request, pk: int, *, perm: str) -> SuiteReport:
    """The suite report `pk`, whatever its state."""
    require_perm(request, perm)
    return get_object_or_404(SuiteReport, pk=pk)


def get_cast_set_for_staff(request, pk: int, *, perm: str) -> CastSet:
    """The CAST set `pk`."""
    require_perm(request, perm)
    return get_object_or_404(CastSet, pk=pk)
