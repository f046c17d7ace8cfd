import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from annotation.models import Clip, ImportJob

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def logged_in(page, live_server):
    User.objects.create_superuser("admin", "", "secret-pw")
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "secret-pw")
    page.click("input[type=submit]")
    return page


def test_curator_uploads_a_folder_and_watches_it_import(logged_in, live_server, corpus_folder):
    page = logged_in
    corpus_folder.add("c1")
    corpus_folder.add("c2", "a second clip", speaker="s2")
    corpus_folder.write_jsonl()

    page.goto(f"{live_server.url}/admin/annotation/corpus/")
    page.click("text=Import a corpus")
    page.set_input_files("#id_folder", str(corpus_folder.root))
    page.fill("#id_corpus_name", "browser-upload")
    page.click("input[type=submit]")

    page.wait_for_selector("text=Import succeeded")
    assert "2 clip(s) imported into “browser-upload”" in page.inner_text("#import-progress")
    assert ImportJob.objects.get().status == ImportJob.Status.SUCCEEDED
    assert sorted(Clip.objects.values_list("external_id", flat=True)) == ["c1", "c2"]


def test_clip_page_plays_its_audio_through_a_signed_link(logged_in, live_server, corpus_folder):
    from django.core.management import call_command

    corpus_folder.add("c1", seconds=1.0)
    corpus_folder.write_jsonl()
    call_command("import_corpus", str(corpus_folder.root), "--no-progress")
    page = logged_in

    page.goto(f"{live_server.url}/admin/annotation/clip/{Clip.objects.get().pk}/change/")
    page.eval_on_selector("audio", "audio => { audio.muted = true; return audio.play(); }")
    page.wait_for_function("document.querySelector('audio').ended", timeout=10_000)

    assert page.eval_on_selector("audio", "a => a.duration") == pytest.approx(1.0, abs=0.1)


def test_when_the_import_ends_the_panel_and_the_fields_agree(logged_in, live_server, corpus_folder, monkeypatch):
    """The page polls a queued import; when a worker has run it, the whole page shows the end
    (not the panel alone above fields that still say queued)."""
    from annotation.services.corpus_import_jobs import corpus_import_run

    monkeypatch.setattr("annotation.shared.jobs._send", lambda model, job_id: None)  # no worker yet
    page = logged_in
    corpus_folder.add("c1")
    corpus_folder.add("c2", "a second clip", speaker="s2")
    corpus_folder.write_jsonl()
    page.goto(f"{live_server.url}/admin/annotation/corpus/")
    page.get_by_role("link", name="Import a corpus").click()
    page.set_input_files("#id_folder", str(corpus_folder.root))
    page.fill("#id_corpus_name", "followed")
    page.click("input[type=submit]")
    page.wait_for_selector("#import-progress >> text=Import queued")
    assert page.locator(".field-status .readonly").inner_text() == "Queued"

    corpus_import_run(job_id=ImportJob.objects.get().pk)  # the worker: the next poll ends and reloads the page

    page.wait_for_selector("#import-progress >> text=Import succeeded")
    assert page.locator("#import-progress[hx-get]").count() == 0
    assert page.locator(".field-status .readonly").inner_text() == "Succeeded"
    assert page.locator(".field-done .readonly").inner_text() == "2"
    page.get_by_role("link", name="“followed”").click()  # on to the new corpus's clips
    expect(page.locator("#result_list tbody tr")).to_have_count(2)  # waits for the clip list
