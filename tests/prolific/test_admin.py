"""The Prolific pages of the admin, through Django's test client: the proposal from a study, the
cost preview, the action buttons (each a background job, run by the eager worker), the top-ups
page's grow button, and the permissions each needs."""

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from annotation.models import Study
from prolific.models import ProlificStudy
from tests.prolific.test_studies import english_study

pytestmark = pytest.mark.django_db


def form_data(page_context) -> dict:
    """The add form's fields as the browser would post them, from their initial values."""
    form = page_context["adminform"].form
    data = {}
    for name in form.fields:
        value = form[name].value()  # as the page shows it (JSON as text)
        if isinstance(value, bool):
            value = "on" if value else ""
        if value not in ("", None):
            data[name] = value
    return data


def test_a_study_on_prolific_is_proposed_created_published_grown_and_stopped(
    admin_client,
    prolific_fake,
    django_capture_on_commit_callbacks,
):
    study = english_study()
    page = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    add_url = reverse("admin:prolific_prolificstudy_add") + f"?study={study.pk}"
    assert f'href="{add_url}"' in page

    proposal = admin_client.get(add_url)
    assert 'value="4"' in proposal.content.decode()  # the estimated minutes, proposed
    data = form_data(proposal.context) | {"places_ceiling": "10", "auto_grow": "on"}
    saved = admin_client.post(reverse("admin:prolific_prolificstudy_add"), data)
    assert saved.status_code == 302, saved.context["adminform"].form.errors
    prolific_study = ProlificStudy.objects.get(study=study)
    change_url = reverse("admin:prolific_prolificstudy_change", args=[prolific_study.pk])

    page = admin_client.get(change_url).content.decode()
    assert "Create the draft on Prolific" in page
    assert "rewards 6.00 + screen-outs 5.00 + bonuses 0.00 + Prolific&#x27;s fee 33.3% 3.67 = 14.67 GBP" in page
    assert "grown to the ceiling of 10 places: 20.00" in page

    act = reverse("admin:prolific_prolificstudy_act", args=[prolific_study.pk])
    for action, outcome in [("create", "Created on Prolific as "), ("publish", "Publish: Prolific says Active.")]:
        with django_capture_on_commit_callbacks(execute=True):
            admin_client.post(act, {"action": action})
        assert outcome in admin_client.get(change_url).content.decode()
    prolific_study.refresh_from_db()
    prolific_fake.state["studies"][prolific_study.prolific_id]["places_taken"] = 6

    topups = admin_client.get(reverse("admin:annotation_study_topup", args=[study.pk])).content.decode()
    assert "Grow places on Prolific" in topups and "growing up to 10" in topups
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(act, {"action": "grow"})
    assert "places 6 -&gt; 10." in admin_client.get(change_url).content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(act, {"action": "stop"})
    study.refresh_from_db()
    assert study.status == Study.Status.CLOSED
    page = admin_client.get(change_url).content.decode()
    assert "Stop: Prolific says Awaiting review." in page and ">Publish</button>" not in page


def test_acting_needs_the_change_permission(client, prolific_fake):
    study = english_study()
    prolific_study = ProlificStudy.objects.create(
        study=study, name="n", description="d", estimated_minutes=4, reward_cents=100, places=6, language="English"
    )
    viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_prolificstudy"))
    client.force_login(viewer)
    page = client.get(reverse("admin:prolific_prolificstudy_change", args=[prolific_study.pk])).content.decode()
    assert "Create the draft on Prolific" not in page
    refused = client.post(reverse("admin:prolific_prolificstudy_act", args=[prolific_study.pk]), {"action": "create"})
    assert refused.status_code == 403
    assert prolific_study.jobs.count() == 0
