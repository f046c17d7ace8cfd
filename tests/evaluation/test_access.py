"""get_agreement_report_for_staff: the report, or PermissionDenied (403, checked first) or Http404."""

import pytest
from django.contrib.auth.models import Permission, User
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.test import RequestFactory

from evaluation.access import get_agreement_report_for_staff
from evaluation.models import AgreementReport
from tests.annotation.factories import StudyFactory

pytestmark = pytest.mark.django_db

MISSING = 999_999
VIEW = "evaluation.view_agreementreport"


def staff_request(*codenames: str):
    user = User.objects.create_user(f"staff-{User.objects.count()}", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="evaluation", codename__in=codenames))
    request = RequestFactory().get("/")
    request.user = User.objects.get(pk=user.pk)  # a fresh object: no permission cache
    return request


def report(**fields) -> AgreementReport:
    return AgreementReport.objects.create(
        study=StudyFactory(), parameters={}, parameters_key="k", fingerprint="f", **fields
    )


def test_report_is_returned_with_its_study():
    queued = report()
    found = get_agreement_report_for_staff(staff_request("view_agreementreport"), queued.pk, perm=VIEW)
    assert found == queued and found.study == queued.study


def test_report_without_the_permission_is_403_even_when_missing():
    queued = report()
    for pk in (queued.pk, MISSING):
        with pytest.raises(PermissionDenied):
            get_agreement_report_for_staff(staff_request("add_agreementreport"), pk, perm=VIEW)


def test_missing_report_or_one_in_another_state_is_404():
    queued = report()
    done = report(status=AgreementReport.Status.SUCCEEDED)
    request = staff_request("view_agreementreport")
    with pytest.raises(Http404):
        get_agreement_report_for_staff(request, MISSING, perm=VIEW)
    with pytest.raises(Http404):
        get_agreement_report_for_staff(request, queued.pk, perm=VIEW, status=AgreementReport.Status.SUCCEEDED)
    assert get_agreement_report_for_staff(request, done.pk, perm=VIEW, status=AgreementReport.Status.SUCCEEDED) == done
