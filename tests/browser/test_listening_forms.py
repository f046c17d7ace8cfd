"""Listening forms in the browser: a 15-item single-choice form and a form
with one item of every type, from the study link to the completion redirect."""

import io

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotation.models import Annotation, Clip, Corpus, ListeningFormItem, PrerequisiteQuestion, Study
from annotation.services.listening_forms import ListeningFormItemSpec, listening_form_study_create
from tests.browser.participant_helpers import prolific_link

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def clips(corpus_folder, count: int) -> list[Clip]:
    for n in range(count):
        corpus_folder.add(f"c{n:02d}", "I did not say she stole the money", seconds=0.6, seed=n)
    corpus_folder.write_jsonl()
    call_command("import_corpus", str(corpus_folder.root), "--corpus", "forms", "--no-progress", stdout=io.StringIO())
    return list(Clip.objects.filter(corpus__name="forms").order_by("external_id"))


def open_form(specs, **settings) -> Study:
    return listening_form_study_create(
        name="Form",
        corpus=Corpus.objects.get(name="forms"),
        items=specs,
        status=Study.Status.LIVE,
        clips_per_task=len(specs),
        consent_text="Answers are stored.",
        **settings,
    )


def enter(page, base, study):
    page.route("https://app.prolific.com/**", lambda route: route.fulfill(body="back on Prolific"))
    page.goto(prolific_link(base, study))
    page.click("button[name=agree][value=yes]")
    for question in PrerequisiteQuestion.objects.filter(study=study):
        page.check(f"input[name=q{question.pk}][value='{question.accepted[0]}']")
    page.click("form.screening button[type=submit]")
    page.click("button[type=submit]")
    expect(page).to_have_url(f"{base}/s/{study.slug}/task/")


def listen_to_every_clip(page):
    submit = page.locator("#submit")
    expect(submit).to_be_disabled()
    count = page.locator("#task-item audio").count()
    for index in range(count):
        page.eval_on_selector_all(
            "#task-item audio", f"(a) => {{ a[{index}].muted = true; return a[{index}].play(); }}"
        )
        page.wait_for_function(f"document.querySelectorAll('#task-item audio')[{index}].ended", timeout=10_000)
    expect(submit).to_be_enabled()


def answer(page, item: ListeningFormItem):
    kind = ListeningFormItem.Type
    if item.item_type == kind.SINGLE_CHOICE:
        page.get_by_label(item.options[item.gold]).check()
    elif item.item_type == kind.PAIRWISE:
        page.get_by_label("The second clip").check()
    elif item.item_type == kind.RATING and item.options:
        page.get_by_label("4 – Good").check()
    elif item.item_type == kind.RATING:
        page.fill("input[type=range][name=value]", "80")
    elif item.item_type == kind.STANCE:
        page.locator("input[name=pole][value=P]").check()
        page.fill("input[type=range][name=confidence]", "70")
    else:
        page.locator("label.word").nth(3).click()


def run_through(page, base, study):
    enter(page, base, study)
    total = study.form_items.count()
    for number in range(1, total + 1):
        expect(page.locator(".progress span")).to_have_text(f"Item {number} of {total}")
        item_id = int(page.get_attribute("#task-item", "data-item"))
        item = ListeningFormItem.objects.get(study_item__taskitem__pk=item_id)
        listen_to_every_clip(page)
        answer(page, item)
        page.click("#submit")
        if number < total:
            expect(page.locator("#task-item")).not_to_have_attribute("data-item", str(item_id))
    expect(page.locator(".code")).to_have_text(study.completion_code)
    with page.expect_request(
        f"https://app.prolific.com/submissions/complete?cc={study.completion_code}", timeout=10_000
    ):
        pass


def test_a_fifteen_item_single_choice_form(production_page, production_server, corpus_folder):
    made = clips(corpus_folder, 15)
    study = open_form(
        [
            ListeningFormItemSpec(
                f"q{n}",
                ListeningFormItem.Type.SINGLE_CHOICE,
                clip,
                prompt="Which meaning did the speaker intend?",
                options=["Someone else said it", "She did something else"],
                gold=n % 2,
                metadata={"stress_category": "contrastive"},
            )
            for n, clip in enumerate(made)
        ]
    )

    run_through(production_page, production_server.url, study)

    answers = Annotation.objects.filter(participant__study=study)
    assert answers.count() == 15
    assert all(a.response["choice"] == a.item.study_item.form_item.gold for a in answers)


def test_a_form_with_one_item_of_every_type(production_page, production_server, corpus_folder):
    made = clips(corpus_folder, 6)
    study = open_form(
        [
            ListeningFormItemSpec(
                "choice", ListeningFormItem.Type.SINGLE_CHOICE, made[0], options=["A meaning", "Another"], gold=0
            ),
            ListeningFormItemSpec(
                "pair", ListeningFormItem.Type.PAIRWISE, made[1], second_clip=made[2], settings={"allow_tie": True}
            ),
            ListeningFormItemSpec(
                "mos", ListeningFormItem.Type.RATING, made[3], options=["Bad", "Poor", "Fair", "Good", "Excellent"]
            ),
            ListeningFormItemSpec("slider", ListeningFormItem.Type.RATING, made[4]),
            ListeningFormItemSpec(
                "warmth",
                ListeningFormItem.Type.STANCE,
                made[5],
                settings={
                    "dimension": "warmth",
                    "positive": "warm",
                    "negative": "cold",
                    "positive_definition": "friendly, caring",
                    "negative_definition": "distant, detached",
                },
            ),
            ListeningFormItemSpec("ssd", ListeningFormItem.Type.STRESSED_WORDS, made[0], gold=[0, 0, 0, 1, 0, 0, 0, 0]),
        ]
    )

    run_through(production_page, production_server.url, study)

    responses = {a.item.study_item.form_item.external_id: (a.levels, a.response) for a in Annotation.objects.all()}
    assert responses["pair"][1] == {"prefer": responses["pair"][1]["prefer"]} and responses["pair"][1]["prefer"] in "ab"
    assert responses["mos"][1] == {"value": 4.0} and responses["slider"][1] == {"value": 80.0}
    assert responses["warmth"][1]["pole"] == "P" and responses["warmth"][1]["confidence"] == 0.7
    assert responses["ssd"][0] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert responses["choice"][1] == {"choice": 0}


def test_the_browser_asks_for_a_missing_answer_and_a_refused_one_keeps_the_listening(
    production_page, production_server, corpus_folder
):
    """Issue 20, defect 9: the answer inputs are required, so the browser asks before sending; and
    a submit the server refuses all the same (a script, an old page) keeps the reports it carried."""
    page, base = production_page, production_server.url
    made = clips(corpus_folder, 2)
    study = open_form(
        [
            ListeningFormItemSpec(
                f"q{n}", ListeningFormItem.Type.SINGLE_CHOICE, clip, options=["One meaning", "Another"], gold=0
            )
            for n, clip in enumerate(made)
        ]
    )
    enter(page, base, study)
    submits = []
    page.on("request", lambda request: submits.append(request) if request.url.endswith("/submit") else None)

    listen_to_every_clip(page)
    page.click("#submit")
    page.wait_for_timeout(500)
    assert submits == []  # the browser asked first
    message = page.eval_on_selector("input[name=choice]", "input => input.validationMessage")
    assert message, "the browser shows why it did not send"

    # The same form with its inputs no longer required (as a page from before the fix): the server
    # refuses the missing answer, and the corrected one is taken on the listening already done.
    page.eval_on_selector_all("input[name=choice]", "inputs => inputs.forEach(i => i.required = false)")
    page.click("#submit")
    expect(page.locator("#gate-errors")).to_contain_text("This field is required.")
    page.get_by_label("One meaning").check()
    page.click("#submit")
    expect(page.locator(".progress span")).to_have_text("Item 2 of 2")
    assert Annotation.objects.filter(participant__study=study).count() == 1
