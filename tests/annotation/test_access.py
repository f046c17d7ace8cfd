"""The access helpers: each returns the object, or raises PermissionDenied (403) or Http404.

Staff helpers (annotation/shared/access.py) check the permission before the lookup;
participant helpers (annotation/views/participant_access.py) recognize the
browser by its signed cookie."""

import pytest
from django.contrib.auth.models import AnonymousUser, Permission, User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from annotation.models import ImportJob, Participant, Study
from annotation.services.assignment import assignment_claim
from annotation.shared.access import (
    get_import_job_for_staff,
    get_study_for_review,
    get_study_for_staff,
    require_perm,
)
from annotation.views.participant_access import (
    UnknownParticipant,
    get_item_for_participant,
    get_participant,
    get_participant_by_key,
    remember_participant,
)
from tests.annotation.factories import ParticipantFactory, StudyFactory
from tests.annotation.study_helpers import live_study, ready_participant

pytestmark = pytest.mark.django_db

MISSING = 999_999
VIEW_OR_CHANGE_IMPORTJOB = ("annotation.view_importjob", "annotation.change_importjob")


def staff_request(*codenames: str):
    user = User.objects.create_user(f"staff-{User.objects.count()}", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    request = RequestFactory().get("/")
    request.user = User.objects.get(pk=user.pk)  # a fresh object: no permission cache
    return request


# --- require_perm ----------------------------------------------------------------------


def test_require_perm_passes_with_the_permission_and_refuses_without():
    require_perm(staff_request("view_study"), "annotation.view_study")
    with pytest.raises(PermissionDenied):
        require_perm(staff_request("view_participant"), "annotation.view_study")


def test_require_perm_with_several_accepts_any_one_of_them():
    require_perm(staff_request("change_study"), ("annotation.view_study", "annotation.change_study"))
    with pytest.raises(PermissionDenied):
        require_perm(staff_request("add_study"), ("annotation.view_study", "annotation.change_study"))


def test_require_perm_refuses_anonymous_users():
    request = RequestFactory().get("/")
    request.user = AnonymousUser()
    with pytest.raises(PermissionDenied):
        require_perm(request, "annotation.view_study")


# --- get_study_for_staff -----------------------------------------------------------------


def test_study_for_staff_is_returned_with_the_permission():
    study = StudyFactory()
    assert get_study_for_staff(staff_request("view_study"), study.pk, perm="annotation.view_study") == study


def test_study_for_staff_without_the_permission_is_403_even_when_missing():
    study = StudyFactory()
    for pk in (study.pk, MISSING):  # checked before the lookup: no one learns which ids exist
        with pytest.raises(PermissionDenied):
            get_study_for_staff(staff_request(), pk, perm="annotation.view_study")


def test_study_for_staff_missing_or_of_a_kind_without_the_capability_is_404():
    form = StudyFactory(kind=Study.Kind.LISTENING_FORM)
    request = staff_request("view_study")
    with pytest.raises(Http404):
        get_study_for_staff(request, MISSING, perm="annotation.view_study")
    with pytest.raises(Http404):
        get_study_for_staff(request, form.pk, perm="annotation.view_study", capability="answers_are_word_marks")
    found = get_study_for_staff(request, form.pk, perm="annotation.view_study", capability="answers_are_choices")
    assert found == form


# --- get_study_for_review ----------------------------------------------------------------


def test_study_for_review_needs_change_participant():
    study = StudyFactory()
    assert get_study_for_review(staff_request("change_participant"), study.pk) == study
    with pytest.raises(PermissionDenied):
        get_study_for_review(staff_request("view_participant"), study.pk)


def test_study_for_review_missing_is_404():
    with pytest.raises(Http404):
        get_study_for_review(staff_request("change_participant"), MISSING)


# --- get_import_job_for_staff -----------------------------------------------------------


def test_import_job_for_staff_with_view_or_change():
    job = ImportJob.objects.create(corpus_name="x", archive_name="a.zip")
    for codename in ("view_importjob", "change_importjob"):
        assert get_import_job_for_staff(staff_request(codename), job.pk, perm=VIEW_OR_CHANGE_IMPORTJOB) == job


def test_import_job_for_staff_without_permission_is_403_and_missing_is_404():
    job = ImportJob.objects.create(corpus_name="x", archive_name="a.zip")
    with pytest.raises(PermissionDenied):
        get_import_job_for_staff(staff_request("add_importjob"), job.pk, perm=VIEW_OR_CHANGE_IMPORTJOB)
    with pytest.raises(Http404):
        get_import_job_for_staff(staff_request("view_importjob"), MISSING, perm=VIEW_OR_CHANGE_IMPORTJOB)


# --- what the admin answers when a helper raises PermissionDenied -----------------------


def test_the_admin_answers_a_refusal_with_its_403_page(client):
    user = User.objects.create_user("viewer", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_participant"))
    client.force_login(user)

    response = client.get(reverse("admin:annotation_participant_review", args=[StudyFactory().pk]))

    assert response.status_code == 403 and "403 Forbidden" in response.content.decode()


# --- participants ---------------------------------------------------------------------------


def participant_request(participant: Participant | None = None):
    """A request from a browser holding `participant`'s cookie (or none)."""
    request = RequestFactory().get("/")
    if participant is not None:
        cookies = remember_participant(HttpResponse(), participant).cookies
        request.COOKIES = {name: morsel.value for name, morsel in cookies.items()}
    return request


def test_participant_is_found_from_the_cookie():
    participant = ParticipantFactory()
    found = get_participant(participant_request(participant), participant.study.slug)
    assert found == participant and found.study == participant.study


def test_no_cookie_or_another_studys_cookie_is_an_unknown_participant_403():
    participant = ParticipantFactory()
    other = StudyFactory()
    for request, slug in ((participant_request(), other.slug), (participant_request(participant), other.slug)):
        with pytest.raises(UnknownParticipant) as refused:
            get_participant(request, slug)
        assert isinstance(refused.value, PermissionDenied) and refused.value.study == other


def test_a_forged_cookie_is_an_unknown_participant():
    participant = ParticipantFactory()
    request = participant_request()
    request.COOKIES = {f"p_{participant.study.slug}": str(participant.pk)}  # unsigned
    with pytest.raises(UnknownParticipant):
        get_participant(request, participant.study.slug)


def test_participant_of_a_missing_study_is_404():
    with pytest.raises(Http404):
        get_participant(participant_request(), "no-such-study")


def test_participant_by_resume_key():
    participant = ParticipantFactory(prolific_pid="")
    assert get_participant_by_key(participant.study.slug, participant.access_key) == participant
    for slug, key in ((participant.study.slug, "wrong"), (StudyFactory().slug, participant.access_key)):
        with pytest.raises(Http404):
            get_participant_by_key(slug, key)


def test_item_for_participant_is_their_own_only():
    study = live_study(target_annotations=5)
    owner, intruder = ready_participant(study), ready_participant(study)
    item = assignment_claim(participant=owner).items.order_by("position").first()
    now = timezone.now()

    found = get_item_for_participant(participant_request(owner), study.slug, item.pk, now)

    assert found.pk == item.pk and found.participant_id == owner.pk
    for request in (participant_request(intruder), participant_request()):
        with pytest.raises(Http404):
            get_item_for_participant(request, study.slug, item.pk, now)
    with pytest.raises(Http404):
        get_item_for_participant(participant_request(owner), StudyFactory().slug, item.pk, now)
