"""Secrets are shown once, when made, and Prolific ids only to who holds the participant permission
(issue 30): a webhook endpoint's signing secret and an API token's key appear on the page that
answers their creation and nowhere after, whoever asks; a Prolific send's page names no participant
to staff without the permission."""

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse
from rest_framework.authtoken.models import Token

from annotation.models import WebhookEndpoint
from annotation.participant_names import PROLIFIC_IDS_HIDDEN
from prolific.models import ProlificSendJob
from tests.annotation.factories import ParticipantFactory

pytestmark = pytest.mark.django_db


def staff(client, *codenames: str) -> User:
    user = User.objects.create_user(f"staff-{len(codenames)}", password="x", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client.force_login(user)
    return user


def test_a_new_endpoints_secret_is_shown_once_then_never_even_to_a_superuser(client, admin_user, public_dns):
    client.force_login(admin_user)
    added = client.post(
        reverse("admin:annotation_webhookendpoint_add"),
        {"url": "https://hooks.example/hooks", "description": "lab", "events": ["import.finished"], "active": "on"},
    )
    endpoint = WebhookEndpoint.objects.get()

    assert added.status_code == 200 and "no-store" in added["Cache-Control"]
    assert endpoint.secret in added.content.decode()
    pages = [
        reverse("admin:annotation_webhookendpoint_change", args=[endpoint.pk]),
        reverse("admin:annotation_webhookendpoint_changelist"),
        reverse("admin:annotation_webhookendpoint_history", args=[endpoint.pk]),
        reverse("admin:annotation_webhookendpoint_delete", args=[endpoint.pk]),
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200 and endpoint.secret not in response.content.decode(), url


def test_changing_an_endpoint_keeps_its_secret_and_does_not_show_it(client, admin_user, public_dns):
    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example/hooks", events=["import.finished"])
    client.force_login(admin_user)

    response = client.post(
        reverse("admin:annotation_webhookendpoint_change", args=[endpoint.pk]),
        {"url": "https://hooks.example/other", "description": "", "events": ["import.failed"], "active": "on"},
        follow=True,
    )

    assert response.status_code == 200 and endpoint.secret not in response.content.decode()
    assert WebhookEndpoint.objects.get().secret == endpoint.secret


def test_an_api_tokens_key_is_shown_once_then_never(client, admin_user):
    owner = User.objects.create_user("script", password="x")
    client.force_login(admin_user)

    added = client.post(reverse("admin:authtoken_tokenproxy_add"), {"user": owner.pk})
    key = Token.objects.get(user=owner).key

    assert added.status_code == 200 and key in added.content.decode()
    viewer_client = client.__class__()
    staff(viewer_client, "view_tokenproxy")
    for who in (client, viewer_client):
        for url in (
            reverse("admin:authtoken_tokenproxy_changelist"),
            reverse("admin:authtoken_tokenproxy_change", args=[owner.pk]),
        ):
            response = who.get(url)
            assert response.status_code == 200 and key not in response.content.decode(), url
    change_page = client.get(reverse("admin:authtoken_tokenproxy_change", args=[owner.pk])).content.decode()
    assert "API token of script" in change_page  # named by its user, not by its key


def test_a_send_jobs_page_names_participants_only_with_the_participant_permission(client):
    participant = ParticipantFactory(prolific_pid="5f0a1b2c3d4e5f6a7b8c9d0e")
    job = ProlificSendJob.objects.create(
        study=participant.study,
        status=ProlificSendJob.Status.SUCCEEDED,
        sent=[participant.prolific_pid],
        failed=[[participant.prolific_pid, f"Prolific answered 400: {participant.prolific_pid} not found"]],
        skipped=[[participant.prolific_pid, "not a Prolific participant"]],
    )
    url = reverse("admin:prolific_prolificsendjob_change", args=[job.pk])

    staff(client, "view_prolificsendjob")
    page = client.get(url).content.decode()
    assert participant.prolific_pid not in page and page.count(PROLIFIC_IDS_HIDDEN) == 3

    staff(client, "view_prolificsendjob", "change_participant")
    assert participant.prolific_pid in client.get(url).content.decode()
