"""A researcher sets up an emphasis study in the admin, in Chromium, without typing JSON (issue 20,
defect 12): screening questions with their answers one per line, an attention check naming the
words it expects, and the warning that tasks ask for more clips than the study has."""

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from annotation.models import AttentionCheck, PrerequisiteQuestion, Study
from tests.annotation.factories import ClipFactory, CorpusFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WARNING = "Tasks ask for 20 clips but the study has 11"


@pytest.fixture
def admin_page(page, live_server):
    User.objects.create_superuser("admin", "", "secret-pw")
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "secret-pw")
    page.click("input[type=submit]")
    return page


def test_a_study_with_screening_and_an_attention_check_set_up_by_clicking(admin_page, live_server):
    page, base = admin_page, live_server.url
    corpus = CorpusFactory(name="espeak clips")
    for n in range(11):
        ClipFactory(corpus=corpus, external_id=f"e{n:02d}", language="en")

    page.goto(f"{base}/admin/annotation/study/add/")
    page.get_by_label("Name:").fill("Emphasis pilot")
    page.get_by_label("Corpus:").select_option(label="espeak clips")
    page.get_by_label("Consent text:").fill("Taking part is voluntary.")
    page.get_by_role("button", name="Create").click()
    expect(page.locator(".messagelist .warning")).to_contain_text(WARNING)

    study = Study.objects.get(name="Emphasis pilot")
    # The check's clip: one of the corpus that the study does not annotate (its own clips are refused).
    check_clip = ClipFactory(corpus=corpus, external_id="check", language="en")
    page.locator(".add-row a", has_text="Add another Prerequisite question").click()
    row = page.locator("#prerequisites-group tr.form-row.dynamic-prerequisites").last
    row.locator("input[name$=-position]").fill("9")
    row.locator("input[name$=-text]").fill("Do you listen with headphones?")
    row.locator("textarea[name$=-choices]").fill("Yes, over-ear\nYes, earbuds\nNo")
    row.locator("textarea[name$=-accepted]").fill("Yes, over-ear\nYes, earbuds")
    page.locator(".add-row a", has_text="Add another Attention check").click()
    check = page.locator("#attention_checks-group tr.form-row.dynamic-attention_checks").last
    check.locator("input[name$=-clip]").fill(str(check_clip.pk))
    check.locator("input[name$=-heavily_emphasized]").fill("sat")
    check.locator("input[name$=-unmarked]").fill("1, 2")
    page.get_by_role("button", name="Save and continue editing").click()

    expect(page.locator(".messagelist .success")).to_be_visible()
    expect(page.locator(".messagelist .warning")).to_contain_text(WARNING)
    question = PrerequisiteQuestion.objects.get(study=study, text="Do you listen with headphones?")
    assert question.choices == ["Yes, over-ear", "Yes, earbuds", "No"]
    assert question.accepted == ["Yes, over-ear", "Yes, earbuds"]
    assert AttentionCheck.objects.get(study=study).expected == {"2": 2, "0": 0, "1": 0}
    expect(page.get_by_text("1 the · 2 cat · 3 sat · 4 on · 5 the · 6 mat")).to_be_visible()

    page.goto(f"{base}/admin/annotation/study/")
    page.locator(f"input[name=_selected_action][value='{study.pk}']").check()
    page.locator("select[name=action]").select_option("set_live")
    page.get_by_role("button", name="Go").click()
    expect(page.locator(".messagelist .success")).to_contain_text("Set live: Emphasis pilot")
    expect(page.locator(".messagelist .warning")).to_contain_text(WARNING)
