"""The admin's index and sidebar grouped by what a researcher does (config.admin_site)."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.urls import reverse

from config.admin_site import GROUPS, grouped_app_list
from tests.api.callers import staff_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def boss(client):
    client.force_login(get_user_model().objects.create_superuser("boss", "boss@example.com", "a long password"))
    return client


def test_every_registered_model_is_in_exactly_one_group():
    registered = {f"{model._meta.app_label}.{model._meta.object_name}" for model in admin.site._registry}
    grouped = [key for _, _, keys in GROUPS for key in keys]

    assert len(grouped) == len(set(grouped)), "a model in two groups"
    assert registered == set(grouped), (
        f"in no group: {sorted(registered - set(grouped))}; grouped, not registered: {sorted(set(grouped) - registered)}"
    )


def test_the_index_and_the_sidebar_list_the_groups_in_the_journey_order(boss):
    index = boss.get(reverse("admin:index"))
    page = boss.get(reverse("admin:annotation_clip_changelist"))

    names = [group["name"] for group in index.context["app_list"]]
    assert names == [name for _, name, _ in GROUPS]
    sidebar = [group["name"] for group in page.context["available_apps"]]
    assert sidebar == names
    operations = next(group for group in index.context["app_list"] if group["name"] == "Operations and logs")
    assert "Prolific calls" in [model["name"] for model in operations["models"]]
    studies = next(group for group in index.context["app_list"] if group["name"] == "Corpora and studies")
    assert "Prolific calls" not in [model["name"] for model in studies["models"]]


def test_a_group_heading_opens_the_group_page_and_an_app_page_stays(boss):
    group = boss.get(reverse("admin:app_group", kwargs={"slug": "label-sets-and-benchmarks"}))
    app = boss.get(reverse("admin:app_list", kwargs={"app_label": "annotation"}))

    assert group.status_code == 200 and [m["object_name"] for m in group.context["app_list"][0]["models"]] == [
        "LabelSet",
        "DatasetExport",
        "BenchmarkRun",
        "DetectionRun",
    ]
    assert boss.get(reverse("admin:app_group", kwargs={"slug": "nothing"})).status_code == 404
    assert app.status_code == 200 and app.context["app_list"][0]["name"] == "Corpora and annotation"


def test_staff_see_only_the_groups_they_may_open(client):
    client.force_login(staff_with("evaluation.view_labelset"))

    index = client.get(reverse("admin:index"))

    assert [group["name"] for group in index.context["app_list"]] == ["Label sets and benchmarks"]
    assert client.get(reverse("admin:app_group", kwargs={"slug": "prolific"})).status_code == 404


def test_a_model_in_no_group_stays_under_its_app():
    app_list = [
        {"name": "Corpora and annotation", "app_label": "annotation", "app_url": "/a/", "has_module_perms": True,
         "models": [{"object_name": "Clip", "name": "Clips"}, {"object_name": "Novel", "name": "Novels"}]},
    ]  # fmt: skip

    grouped = grouped_app_list(app_list, group_url=lambda slug: f"/g/{slug}/")

    assert [(group["name"], [m["name"] for m in group["models"]]) for group in grouped] == [
        ("Corpora and studies", ["Clips"]),
        ("Corpora and annotation", ["Novels"]),
    ]
    assert grouped[0]["app_url"] == "/g/corpora-and-studies/"
