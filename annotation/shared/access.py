"""Access checks for staff pages: one helper per lookup, returning the object or raising.

Every staff page (the admin's own extra views and the evaluation pages served
inside the admin) finds what it works on through these helpers, so all of them
answer alike: PermissionDenied (403) when the user lacks the permission, and
Http404 when there is no such object. The permission is checked first, so that
staff without it cannot learn which ids exist. Nothing here returns None or a
response for the view to pass on.

Studies are looked up by both apps (evaluation's report pages too), so the
study helpers live here and evaluation/access.py builds its report lookup on
`require_perm`. Participants are not staff: how a participant's browser is
recognized is in annotation/views/participant_access.py.
"""

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from annotation.models import ImportJob, Study
from annotation.study_kinds import kinds_with


def require_perm(request, perm: str | tuple[str, ...]) -> None:
    """PermissionDenied unless the user has `perm`; given a tuple, any one of
    them will do (the admin lets a change permission stand in for view)."""
    perms = (perm,) if isinstance(perm, str) else perm
    if not any(request.user.has_perm(name) for name in perms):
        raise PermissionDenied


def get_study_for_staff(request, pk: int, *, perm: str | tuple[str, ...], capability: str | None = None) -> Study:
    """The study `pk` (of a kind with `capability`, when given: another kind is 404 too)."""
    require_perm(request, perm)
    lookup = {"pk": pk} if capability is None else {"pk": pk, "kind__in": kinds_with(capability)}
    return get_object_or_404(Study, **lookup)


def get_study_for_review(request, study_id: int) -> Study:
    """The study whose participants are reviewed: deciding on them needs change_participant."""
    return get_study_for_staff(request, study_id, perm="annotation.change_participant")


def get_import_job_for_staff(request, pk: int, *, perm: str | tuple[str, ...]) -> ImportJob:
    require_perm(request, perm)
    return get_object_or_404(ImportJob, pk=pk)
