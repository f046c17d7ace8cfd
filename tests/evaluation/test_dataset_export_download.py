"""Downloading an export: staff with view_datasetexport get a short-lived signed link; the link
serves the zip as an attachment and nothing else; the admin lists exports and polls a build."""

import time

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from evaluation.models import DatasetExport
from evaluation.services.dataset_exports import ExportRefused, dataset_export_link, dataset_export_request
from tests.evaluation.builders import golden_study
from tests.evaluation.export_builders import exported, final_label_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def export(django_capture_on_commit_callbacks):
    label_set = final_label_set(golden_study(), django_capture_on_commit_callbacks)
    return exported(django_capture_on_commit_callbacks, format="jsonl", label_set=label_set)


def staff(*perms: str) -> User:
    user = User.objects.create_user(f"staff{User.objects.count()}", password="x", is_staff=True)
    for perm in perms:
        app, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    return user


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_staff_with_the_permission_are_sent_to_a_link_that_serves_the_zip(client, export):
    client.force_login(staff("evaluation.view_datasetexport", "evaluation.view_labelset"))

    redirected = client.get(reverse("admin:evaluation_datasetexport_download", args=[export.pk]))

    assert redirected.status_code == 302 and "no-store" in redirected["Cache-Control"]
    client.logout()  # the signed link is the credential, as a presigned S3 URL is
    response = client.get(redirected["Location"])
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == 'attachment; filename="golden-labels-v1-jsonl.zip"'
    assert body(response) == export.file.open("rb").read()


def test_staff_without_the_permission_get_403(client, export):
    client.force_login(staff())

    assert client.get(reverse("admin:evaluation_datasetexport_download", args=[export.pk])).status_code == 403
    assert client.get(reverse("admin:evaluation_datasetexport_progress", args=[export.pk])).status_code == 403


def test_the_download_needs_the_right_to_read_what_the_export_holds(client, export):
    """As asking for it does: a label set's export needs view_labelset too."""
    client.force_login(staff("evaluation.view_datasetexport"))

    assert client.get(reverse("admin:evaluation_datasetexport_download", args=[export.pk])).status_code == 403


def test_an_unfinished_export_answers_409_with_retry_after(client, export):
    DatasetExport.objects.filter(pk=export.pk).update(status=DatasetExport.Status.RUNNING, phase="zipping")
    client.force_login(staff("evaluation.view_datasetexport", "evaluation.view_labelset"))

    response = client.get(reverse("admin:evaluation_datasetexport_download", args=[export.pk]))

    assert response.status_code == 409 and response["Retry-After"] == "5"
    assert "The export: not ready yet (zipping)" in response.content.decode()
    assert f"/admin/evaluation/datasetexport/{export.pk}/change/" in response.content.decode()


# --- Prolific ids: downloading needs what asking for them needs (annotation.change_participant) ------

VIEW_RAW = ("evaluation.view_datasetexport", "annotation.view_annotation")


@pytest.fixture
def export_with_ids(export, django_capture_on_commit_callbacks):
    study = export.label_set.studies.get()
    return exported(django_capture_on_commit_callbacks, format="raw", study=study, include_prolific_ids=True)


def test_view_only_staff_cannot_download_an_export_with_prolific_ids(client, export_with_ids):
    from tests.api.callers import token_client

    viewer = staff(*VIEW_RAW)
    client.force_login(viewer)

    admin_download = client.get(reverse("admin:evaluation_datasetexport_download", args=[export_with_ids.pk]))
    api_link = token_client(viewer).get(f"/api/v1/dataset-exports/{export_with_ids.pk}/link/")
    page = client.get(reverse("admin:evaluation_datasetexport_change", args=[export_with_ids.pk])).content.decode()

    assert export_with_ids.status == DatasetExport.Status.SUCCEEDED and export_with_ids.include_prolific_ids
    assert admin_download.status_code == 403 and api_link.status_code == 403
    assert "Download " not in page and "needs the permission to change participants" in page


def test_who_may_see_participants_downloads_an_export_with_prolific_ids(client, export_with_ids):
    from tests.api.callers import token_client

    curator = staff(*VIEW_RAW, "annotation.change_participant")
    client.force_login(curator)

    admin_download = client.get(reverse("admin:evaluation_datasetexport_download", args=[export_with_ids.pk]))
    api_link = token_client(curator).get(f"/api/v1/dataset-exports/{export_with_ids.pk}/link/")

    assert admin_download.status_code == 302 and api_link.status_code == 200
    client.logout()
    assert body(client.get(api_link.json()["url"])) == export_with_ids.file.open("rb").read()


def test_a_forged_expired_or_foreign_token_is_404(client, export, monkeypatch):
    url = dataset_export_link(export=export)
    token = url.rstrip("/").rsplit("/", 1)[1]
    forged = url.replace(token, token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB"))
    assert client.get(forged).status_code == 404

    from annotation.audio_links import signed_audio_url

    audio_token = signed_audio_url(export.file.name).rsplit("/", 1)[1]  # signed for another purpose
    assert client.get(reverse("evaluation:export_download", args=[audio_token])).status_code == 404

    later = time.time() + 601
    monkeypatch.setattr(time, "time", lambda: later)
    assert client.get(url).status_code == 404


def test_a_link_to_a_deleted_file_is_404_and_unfinished_exports_have_no_link(client, export):
    url = dataset_export_link(export=export)
    export.file.delete(save=False)
    assert client.get(url).status_code == 404

    queued = dataset_export_request(format="raw", study=export.label_set.studies.get())
    with pytest.raises(ExportRefused, match="has no file to download"):
        dataset_export_link(export=queued)


def test_the_link_is_presigned_with_an_attachment_name_on_s3(export, settings, monkeypatch):
    from annotation import signed_links

    calls = []

    class Presigning:
        def url(self, name, parameters=None, expire=None):
            calls.append((name, parameters, expire))
            return "https://bucket.example/presigned"

    monkeypatch.setattr(signed_links, "storage_presigns", lambda: True)
    monkeypatch.setattr(signed_links, "default_storage", Presigning())

    assert dataset_export_link(export=export) == "https://bucket.example/presigned"
    assert calls == [
        (export.file.name, {"ResponseContentDisposition": 'attachment; filename="golden-labels-v1-jsonl.zip"'}, 600)
    ]


def test_the_admin_lists_exports_with_a_download_link_and_polls_until_done(admin_client, export):
    listing = admin_client.get(reverse("admin:evaluation_datasetexport_changelist"))
    assert listing.status_code == 200
    assert reverse("admin:evaluation_datasetexport_download", args=[export.pk]) in listing.content.decode()

    page = admin_client.get(reverse("admin:evaluation_datasetexport_change", args=[export.pk]))
    assert page.status_code == 200 and "Download golden-labels-v1-jsonl.zip" in page.content.decode()

    progress = reverse("admin:evaluation_datasetexport_progress", args=[export.pk])
    assert admin_client.get(progress, HTTP_HX_REQUEST="true").status_code == 286
    DatasetExport.objects.filter(pk=export.pk).update(status=DatasetExport.Status.RUNNING, phase="zipping")
    polled = admin_client.get(progress, HTTP_HX_REQUEST="true")
    assert polled.status_code == 200 and "zipping" in polled.content.decode() and "hx-get" in polled.content.decode()


# --- On S3 (moto_server, as in tests/annotation/test_storage_s3.py): a real presigned link -------

from tests.annotation import test_storage_s3 as s3  # noqa: E402

moto_endpoint, s3_bucket = s3.moto_endpoint, s3.s3_bucket  # the fixtures of that module, used here too


@pytest.mark.s3
def test_on_s3_the_export_is_a_private_object_and_the_link_a_presigned_attachment(
    s3_bucket, django_capture_on_commit_callbacks
):
    label_set = final_label_set(golden_study(), django_capture_on_commit_callbacks)
    export = exported(django_capture_on_commit_callbacks, format="jsonl", label_set=label_set)

    assert s3_bucket.keys() == [export.file.name]
    url = dataset_export_link(export=export)
    assert s3.presigned_query(url)["X-Amz-Expires"] == "600"
    status, headers, data = s3.fetch(url)
    assert status == 200 and data == s3_bucket.read(export.file.name)
    assert headers["Content-Disposition"] == 'attachment; filename="golden-labels-v1-jsonl.zip"'
    assert s3.fetch(url.split("?")[0])[0] == 403
