import io
import json
import zipfile

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from annotation.models import Clip, ImportJob
from tests.annotation.factories import ClipFactory, ClipWarningFactory, SpeakerFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    user = User.objects.create_user("curator", password="pw", is_staff=True)
    client.force_login(user)
    return user


def grant(user, *codenames):
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))


def zipped(folder) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for path in folder.rglob("*"):
            bundle.write(path, str(path.relative_to(folder)))
    buffer.seek(0)
    buffer.name = "upload.zip"
    return buffer


def upload_and_follow(admin_client, corpus_folder, capture_on_commit):
    """Upload the folder as a .zip (the import runs at commit) and open the job page."""
    with capture_on_commit(execute=True):
        response = admin_client.post(
            reverse("admin:annotation_importjob_add"),
            {"archive": zipped(corpus_folder.root), "corpus_name": "uploaded"},
        )
    return admin_client.get(response["Location"])


@pytest.mark.parametrize(
    "model", ["corpus", "speaker", "clip", "word", "importjob", "study", "listeningformitem", "participant"]
)
def test_changelists_render(admin_client, model):
    ClipWarningFactory(clip=ClipFactory(speaker=SpeakerFactory()))

    assert admin_client.get(reverse(f"admin:annotation_{model}_changelist")).status_code == 200


def test_clip_list_filters_by_language_emotion_speaker_corpus_and_warning(admin_client):
    speaker = SpeakerFactory()
    flagged = ClipFactory(language="pt", emotion="angry", speaker=speaker, corpus=speaker.corpus)
    ClipWarningFactory(clip=flagged)
    ClipFactory(language="en", emotion="neutral")
    url = reverse("admin:annotation_clip_changelist")

    for query in (
        "language=pt",
        "emotion=angry",
        f"speaker__id__exact={speaker.pk}",
        f"corpus__id__exact={flagged.corpus_id}",
        "warning=clipping",
        "warning=any",
    ):
        listed = admin_client.get(f"{url}?{query}").context["cl"].queryset
        assert list(listed) == [flagged], query
    assert flagged not in admin_client.get(f"{url}?warning=none").context["cl"].queryset


def test_clip_page_shows_a_signed_player_words_and_warnings(admin_client):
    clip = ClipFactory()
    ClipWarningFactory(clip=clip)

    page = admin_client.get(reverse("admin:annotation_clip_change", args=[clip.pk])).content.decode()

    assert '<audio controls preload="none" src="/a/audio/' in page
    assert "3 run(s) of 3+ samples at full scale" in page
    assert 'value="mat"' in page


def test_search_finds_clips_by_transcript(admin_client):
    ClipFactory(transcript="rare words here")
    ClipFactory()

    listed = admin_client.get(reverse("admin:annotation_clip_changelist") + "?q=rare").context["cl"].queryset

    assert [clip.transcript for clip in listed] == ["rare words here"]


def test_upload_imports_in_the_background_and_shows_progress(
    admin_client, corpus_folder, django_capture_on_commit_callbacks
):
    corpus_folder.add("c1")
    corpus_folder.add("c2", "a second clip")
    corpus_folder.write_jsonl()

    response = upload_and_follow(admin_client, corpus_folder, django_capture_on_commit_callbacks)

    job = ImportJob.objects.get()
    assert job.status == ImportJob.Status.SUCCEEDED
    assert job.summary["created"] == 2 and Clip.objects.filter(corpus__name="uploaded").count() == 2
    corpus = Clip.objects.filter(corpus__name="uploaded").first().corpus
    clips = f"{reverse('admin:annotation_clip_changelist')}?corpus__id__exact={corpus.pk}"
    page = response.content.decode()
    assert f'2 clip(s) imported into <a href="{clips}">“uploaded”</a>' in page.replace("&amp;", "&")
    assert "2 row(s) in " in page and ": 2 clip(s) imported, 0 already present" in page  # the result, not JSON
    assert '"created":' not in page and "&quot;created&quot;" not in page
    assert not job.archive.storage.exists(job.archive.name)  # the upload is not kept
    progress = admin_client.get(reverse("admin:annotation_importjob_progress", args=[job.pk]), HTTP_HX_REQUEST="true")
    assert progress.status_code == 286 and progress["HX-Refresh"] == "true"  # stop polling, reload the page


def test_refused_upload_lists_rows_and_writes_nothing(admin_client, corpus_folder, django_capture_on_commit_callbacks):
    corpus_folder.add("c1")
    corpus_folder.add("gone", write=False)
    corpus_folder.write_jsonl()

    response = upload_and_follow(admin_client, corpus_folder, django_capture_on_commit_callbacks)

    job = ImportJob.objects.get()
    assert job.status == ImportJob.Status.FAILED
    assert job.problems == [
        {
            "file": "manifest.jsonl",
            "line": 2,
            "clip_id": "gone",
            "field": "audio",
            "reason": "audio file 'audio/gone.wav' not found",
        }
    ]
    page = response.content.decode()
    assert "Nothing was imported: 1 bad row(s)" in page and "audio file &#x27;audio/gone.wav&#x27; not found" in page
    assert Clip.objects.count() == 0


def test_running_job_keeps_polling(admin_client):
    job = ImportJob.objects.create(
        corpus_name="x", archive_name="a.zip", status="running", phase="decoding audio", done=3, total=10
    )

    response = admin_client.get(reverse("admin:annotation_importjob_progress", args=[job.pk]), HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    assert 'hx-trigger="every 1s"' in response.content.decode() and "3 of 10 clips (30 %)" in response.content.decode()


def test_upload_refuses_files_that_are_not_zip_archives(admin_client):
    fake = io.BytesIO(b"not a zip")
    fake.name = "corpus.zip"

    response = admin_client.post(reverse("admin:annotation_importjob_add"), {"archive": fake, "corpus_name": "x"})

    assert "corpus.zip: not a .zip archive" in response.content.decode()
    assert ImportJob.objects.count() == 0


def test_upload_needs_the_add_permission(client, staff, corpus_folder):
    url = reverse("admin:annotation_importjob_add")
    assert client.get(url).status_code == 403

    grant(staff, "add_importjob", "view_importjob")
    assert client.get(url).status_code == 200


def test_progress_needs_the_view_permission(client, staff):
    job = ImportJob.objects.create(corpus_name="x", archive_name="a.zip")

    assert client.get(reverse("admin:annotation_importjob_progress", args=[job.pk])).status_code == 403


def test_anonymous_users_are_sent_to_login(client):
    response = client.get(reverse("admin:annotation_importjob_add"))

    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def folder_files(folder):
    files, paths = [], []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        handle = io.BytesIO(path.read_bytes())
        handle.name = path.name
        files.append(handle)
        paths.append(f"{folder.name}/{path.relative_to(folder)}")
    return files, paths


def test_a_folder_can_be_uploaded_file_by_file(admin_client, corpus_folder, django_capture_on_commit_callbacks):
    corpus_folder.add("c1")
    corpus_folder.write_jsonl()
    files, paths = folder_files(corpus_folder.root)

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            reverse("admin:annotation_importjob_add"),
            {"folder": files, "folder_paths": json.dumps(paths), "corpus_name": "from-folder"},
        )

    job = ImportJob.objects.get()
    assert (job.status, job.archive_name) == (ImportJob.Status.SUCCEEDED, "corpus.zip")
    assert Clip.objects.get().corpus.name == "from-folder"


def test_folder_upload_paths_may_not_escape(admin_client, corpus_folder):
    corpus_folder.add("c1")
    corpus_folder.write_jsonl()
    files, paths = folder_files(corpus_folder.root)
    paths[0] = "../../etc/cron.d/evil"

    response = admin_client.post(
        reverse("admin:annotation_importjob_add"),
        {"folder": files, "folder_paths": json.dumps(paths), "corpus_name": "x"},
    )

    assert "&#x27;../../etc/cron.d/evil&#x27; escapes its folder" in response.content.decode()
    assert ImportJob.objects.count() == 0


def test_folder_upload_without_paths_is_refused(admin_client, corpus_folder):
    corpus_folder.add("c1")
    files, _ = folder_files(corpus_folder.root)

    response = admin_client.post(reverse("admin:annotation_importjob_add"), {"folder": files, "corpus_name": "x"})

    assert "did not send the folder&#x27;s file paths" in response.content.decode()


def test_archive_and_folder_together_are_refused(admin_client, corpus_folder):
    corpus_folder.add("c1")
    corpus_folder.write_jsonl()
    files, paths = folder_files(corpus_folder.root)

    response = admin_client.post(
        reverse("admin:annotation_importjob_add"),
        {"archive": zipped(corpus_folder.root), "folder": files, "folder_paths": json.dumps(paths), "corpus_name": "x"},
    )

    assert "Choose either a .zip archive or a folder." in response.content.decode()


def test_upload_refuses_a_zip_bomb_from_its_declared_sizes(admin_client, settings, tmp_path):
    # Refused in the upload form, before the archive is stored or a worker extracts a byte of it.
    settings.IMPORT_MAX_ARCHIVE_BYTES = 10_000_000
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("manifest.jsonl", "{}")
        for i in range(4):
            bundle.writestr(f"f{i}.wav", b"\0" * 4_000_000)
    archive.seek(0)
    archive.name = "bomb.zip"
    assert len(archive.getvalue()) < 100_000

    response = admin_client.post(reverse("admin:annotation_importjob_add"), {"archive": archive, "corpus_name": "x"})

    assert "bomb.zip: declares 16000002 bytes uncompressed; the limit is 10000000" in response.content.decode()
    assert ImportJob.objects.count() == 0
