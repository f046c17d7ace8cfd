"""No oracle in the admin's lists (issue 30): a changelist accepts only the filters, date drill-down
and searches its admin declares (annotation.admin.base). Django's own changelist applies any lookup
of the query string to the model's fields, so that whoever may view a list could read a hidden
Prolific id or a signing secret off the row count, one `__regex` at a time.

"Refused" is 400 (DisallowedModelAdminLookup), with no query run that carries the lookup: checked by
the SQL each request runs, so a list that filtered and then showed nothing would fail too."""

import re

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.core import checks
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.admin.base import NEVER_FILTERED, PlatformModelAdmin
from annotation.models import Participant, WebhookEndpoint
from tests.annotation.factories import AnnotationFactory, ParticipantFactory

pytestmark = pytest.mark.django_db
PROBE = "zq7-oracle-probe"  # no row holds this: a query carrying it shows in the captured SQL


def registered() -> list[tuple[type, admin.ModelAdmin]]:
    return sorted(admin.site._registry.items(), key=lambda pair: pair[0]._meta.label)


def changelist(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def probed_field(model) -> str:
    """The field an attacker would aim at: one that holds a secret or an id when the model has
    one, else its primary key."""
    local = [field.name for field in model._meta.concrete_fields]
    return next((name for name in local if name in NEVER_FILTERED), model._meta.pk.name)


@pytest.fixture
def viewer(client) -> User:
    """Staff who may view every list the admin site has, and change nothing (not even participants)."""
    user = User.objects.create_user("curious", password="x", is_staff=True)
    codenames = [f"view_{model._meta.model_name}" for model, _ in registered()]
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client.force_login(user)
    return user


def refused_without_a_query(client, url: str, params: dict) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as ran:
        response = client.get(url, params)
    return response.status_code, [q["sql"] for q in ran.captured_queries if PROBE in q["sql"]]


def test_every_admin_of_the_site_stands_on_the_platform_base():
    outside = [type(model_admin).__name__ for _, model_admin in registered()]
    outside = [
        name for (_, model_admin), name in zip(registered(), outside) if not isinstance(model_admin, PlatformModelAdmin)
    ]
    assert outside == []
    labels = {model._meta.label for model, _ in registered()}
    assert {"auth.User", "auth.Group", "authtoken.TokenProxy", "annotation.Participant"} <= labels


@pytest.mark.parametrize("model", [model for model, _ in registered()], ids=lambda model: model._meta.label)
def test_every_changelist_refuses_an_undeclared_regex_lookup(client, viewer, model):
    url = changelist(model)
    assert client.get(url).status_code == 200  # the viewer may see the list: a refusal below is the lookup's

    lookup = f"{probed_field(model)}__regex"
    status, leaked = refused_without_a_query(client, url, {lookup: f"^{PROBE}"})

    assert status == 400, f"{model._meta.label}: ?{lookup}= answered {status}"
    assert leaked == [], f"{model._meta.label}: a query ran with the probe: {leaked}"


def test_the_issues_participant_probe_is_refused_even_for_a_superuser(client, admin_user):
    hidden = ParticipantFactory(prolific_pid="5f3e0c1d2b4a697887766554")
    client.force_login(admin_user)
    url = changelist(Participant)

    status, leaked = refused_without_a_query(client, url, {"id": hidden.pk, "prolific_pid__regex": f"^[0-7]{PROBE}"})

    assert status == 400 and leaked == []
    # The declared filters still work, and so does the link the review page gives.
    listed = client.get(url, {"study__id__exact": hidden.study_id, "decision__exact": hidden.decision})
    assert listed.status_code == 200 and list(listed.context["cl"].result_list) == [hidden]


def test_a_signing_secret_cannot_be_fished_out_of_the_endpoint_list(client, viewer):
    endpoint = WebhookEndpoint.objects.create(url="https://example.org/hooks", events=["import.finished"])
    url = changelist(WebhookEndpoint)

    for lookup in ("secret__regex", "secret__startswith", "secret__gte", "secret"):
        status, leaked = refused_without_a_query(client, url, {lookup: endpoint.secret[:8] + PROBE})
        assert status == 400 and leaked == [], lookup
    listed = client.get(url, {"active__exact": "1"})
    assert listed.status_code == 200 and list(listed.context["cl"].result_list) == [endpoint]
    assert endpoint.secret not in listed.content.decode()


def test_a_relation_hop_to_a_hidden_field_is_refused_too(client, admin_user):
    client.force_login(admin_user)
    annotation = AnnotationFactory()

    for lookup in ("participant__prolific_pid__regex", "participant__access_key__startswith", "clip__id__gte"):
        status, leaked = refused_without_a_query(client, changelist(type(annotation)), {lookup: PROBE})
        assert status == 400 and leaked == [], lookup


def test_the_date_drill_down_and_declared_filters_of_the_annotation_list_still_work(client, admin_user):
    client.force_login(admin_user)
    annotation = AnnotationFactory()
    when = annotation.submitted_at
    url = changelist(type(annotation))

    for params in (
        {"submitted_at__year": when.year, "submitted_at__month": when.month},
        {"participant": annotation.participant_id},
        {"participant__study__id__exact": annotation.participant.study_id},
        {"finished": "no"},
        {"q": annotation.clip.external_id},
    ):
        response = client.get(url, params)
        assert response.status_code == 200, params
        assert list(response.context["cl"].result_list) == [annotation], params


def test_a_search_reaches_prolific_ids_only_for_who_sees_them(client, viewer, admin_user):
    participant = ParticipantFactory(prolific_pid="60a1b2c3d4e5f60718293a4b")
    url = changelist(Participant)

    as_viewer = client.get(url, {"q": participant.prolific_pid[:6]})
    assert as_viewer.status_code == 200 and list(as_viewer.context["cl"].result_list) == [participant]
    assert as_viewer.context["cl"].search_fields == []  # the query was not applied: the whole list shows
    client.force_login(admin_user)
    assert list(client.get(url, {"q": "no-such-id"}).context["cl"].result_list) == []


def test_a_participants_resume_key_is_never_shown(client, admin_user):
    participant = ParticipantFactory()
    client.force_login(admin_user)

    page = client.get(reverse("admin:annotation_participant_change", args=[participant.pk])).content.decode()

    assert participant.access_key not in page and participant.prolific_pid in page


def test_an_admin_declaring_a_filter_over_a_hidden_field_fails_the_system_check():
    class Careless(PlatformModelAdmin):
        list_filter = ["study", "prolific_pid"]
        search_fields = ["=prolific_session_id"]
        date_hierarchy = "completed_at"

    errors = Careless(Participant, admin.site).check()

    found = [(error.id, re.search(r"\.(\w+) names '(\w+)'", error.msg).groups()) for error in errors]
    assert ("platform.E001", ("list_filter", "prolific_pid")) in found
    assert ("platform.E001", ("search_fields", "prolific_session_id")) in found
    assert all(isinstance(error, checks.Error) for error in errors) and len(found) == 2


def test_the_site_passes_its_own_check():
    assert [e for _, model_admin in registered() for e in model_admin.check() if e.id == "platform.E001"] == []
