"""The admin's upload of a public dataset (Label sets → Import a public dataset): the hub's Parquet
files and EmphAssess's gold_df.json, a refusal that lists each bad record, and the "Skip invalid
records" box that imports the rest and lists each record left out."""

import io
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Clip, Study
from evaluation.models import LabelSet
from tests.evaluation.dataset_layouts import emphassess_with_punctuation_marks, morrison_annotations, tinystress_parquet

pytestmark = pytest.mark.django_db
URL = "admin:evaluation_labelset_import"


def staff(client, *perms: str) -> User:
    user = User.objects.create_user("researcher", password="x", is_staff=True)
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    client.force_login(user)
    return user


def zipped(root: Path) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    return SimpleUploadedFile("dataset.zip", buffer.getvalue(), content_type="application/zip")


def upload(client, root: Path, **fields):
    form = {"archive": zipped(root), "splits": "given", "split_seed": 0, **fields}
    return client.post(reverse(URL), form)


def test_the_label_set_list_has_the_import_button_for_who_may_add(client):
    staff(client, "evaluation.view_labelset")
    assert "Import a public dataset" not in client.get(reverse("admin:evaluation_labelset_changelist")).content.decode()
    assert client.get(reverse(URL)).status_code == 403
    client.logout()
    User.objects.all().delete()
    staff(client, "evaluation.view_labelset", "evaluation.add_labelset")
    page = client.get(reverse("admin:evaluation_labelset_changelist")).content.decode()
    assert f'href="{reverse(URL)}"' in page
    assert 'name="skip_invalid"' in client.get(reverse(URL)).content.decode()


def test_the_hubs_parquet_files_import_with_their_audio_inside(client, tmp_path):
    tinystress_parquet(tmp_path / "up", {"train": 2, "test": 1})
    staff(client, "evaluation.view_labelset", "evaluation.add_labelset")

    response = upload(client, tmp_path / "up", format="tinystress", name="TinyStress")

    page = response.content.decode()
    assert response.status_code == 200 and "Imported" in page, page[:3000]
    label_set = LabelSet.objects.get(name="TinyStress")
    assert label_set.summary["counts"] == {"en": {"train": 2, "test": 1}}
    assert reverse("admin:evaluation_labelset_change", args=[label_set.pk]) in page
    assert "No record was skipped." in page


def test_bad_records_are_listed_and_skipped_only_when_the_box_is_ticked(client, tmp_path, media_storage):
    emphassess_with_punctuation_marks(tmp_path / "up")
    staff(client, "evaluation.view_labelset", "evaluation.add_labelset")
    fields = {"format": "emphassess", "name": "EmphAssess", "audio": "audio", "splits": "test"}

    refused = upload(client, tmp_path / "up", **fields).content.decode()

    assert "2 bad record(s) in gold_df.json; nothing was imported." in refused
    assert "<td>gold_df.json line 2</td><td>emph_001</td><td>gold_emphasis</td>" in refused
    assert "indices [3] mark punctuation, not a word" in refused
    assert not LabelSet.objects.exists() and not Clip.objects.exists()
    assert not any(path.is_file() for path in media_storage.rglob("*"))

    page = upload(client, tmp_path / "up", skip_invalid="on", **fields).content.decode()

    assert "Skipped 2 record(s), not imported (also listed in the set's source):" in page
    assert "<td>gold_df.json line 4</td><td>emph_003</td><td>gold_emphasis</td>" in page
    assert LabelSet.objects.get(name="EmphAssess").summary["clips"] == 3


def test_morrison_needs_the_permission_to_add_studies(client, tmp_path):
    morrison_annotations(tmp_path / "up")
    user = staff(client, "evaluation.add_labelset")
    fields = {"format": "morrison", "name": "Morrison", "audio": "LibriTTS"}

    page = upload(client, tmp_path / "up", **fields).content.decode()
    assert "you need the permission to add studies" in page and not Study.objects.exists()

    user.user_permissions.add(Permission.objects.get(content_type__app_label="annotation", codename="add_study"))
    page = upload(client, tmp_path / "up", **fields).content.decode()
    assert "Closed binary study" in page and Study.objects.get(name="Morrison").items.count() == 20
