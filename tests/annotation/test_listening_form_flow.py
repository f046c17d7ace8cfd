"""Listening forms on the shared participant machinery (Django test client)."""

import re

import pytest

from annotation.models import Annotation, ListeningFormItem, PrerequisiteQuestion
from annotation.services.listening_forms import ListeningFormItemSpec
from tests.annotation.study_helpers import listened, listened_to_all, live_form, page_text_for_leaks

pytestmark = pytest.mark.django_db

PID = "5f0c1e2d3b4a596877665544"


def every_type(clips):
    return [
        ListeningFormItemSpec(
            "choice",
            ListeningFormItem.Type.SINGLE_CHOICE,
            clips[0],
            options=["She took it", "Someone else did", "Maybe"],
            gold=1,
        ),
        ListeningFormItemSpec(
            "pair", ListeningFormItem.Type.PAIRWISE, clips[1], second_clip=clips[2], settings={"allow_tie": True}
        ),
        ListeningFormItemSpec(
            "mos",
            ListeningFormItem.Type.RATING,
            clips[1],
            options=["Bad", "Poor", "Fair", "Good", "Excellent"],
            metadata={"system": "tts-a"},
        ),
        ListeningFormItemSpec("slider", ListeningFormItem.Type.RATING, clips[2]),
        ListeningFormItemSpec(
            "warm",
            ListeningFormItem.Type.STANCE,
            clips[3],
            settings={
                "dimension": "warmth",
                "positive": "warm",
                "negative": "cold",
                "positive_definition": "friendly",
                "negative_definition": "distant",
            },
        ),
        ListeningFormItemSpec("ssd", ListeningFormItem.Type.STRESSED_WORDS, clips[0], gold=[0, 0, 0, 1, 0, 0, 0]),
    ]


def enter(client, study):
    client.get(f"/s/{study.slug}/?PROLIFIC_PID={PID}")
    client.post(f"/s/{study.slug}/consent/", {"agree": "yes"})
    answers = {f"q{q.pk}": q.accepted[0] for q in PrerequisiteQuestion.objects.filter(study=study)}
    client.post(f"/s/{study.slug}/screening/", answers)
    client.post(f"/s/{study.slug}/instructions/")


def answer_for(page: str, item: ListeningFormItem) -> dict:
    kind = ListeningFormItem.Type
    if item.item_type == kind.SINGLE_CHOICE:
        return {"choice": "1"}
    if item.item_type == kind.PAIRWISE:
        return {"prefer": "b"}
    if item.item_type == kind.RATING:
        return {"value": "4" if item.options else "73"}
    if item.item_type == kind.STANCE:
        return {"pole": "N", "confidence": "80"}
    return {"stressed": ["3"]}


def test_a_form_with_every_item_type_from_link_to_completion(client):
    study = live_form(specs=every_type)
    enter(client, study)
    participant = study.participants.get()
    seen_types = []
    for _ in range(6):
        page = client.get(f"/s/{study.slug}/task/").content.decode()
        item_id = int(re.search(r'data-item="(\d+)"', page).group(1))
        item = participant.tasks.get().items.get(pk=item_id)
        form_item = item.study_item.form_item
        seen_types.append(form_item.item_type)
        assert "gold" not in page_text_for_leaks(page)
        refused = client.post(
            f"/s/{study.slug}/task/items/{item_id}/submit", answer_for(page, form_item), HTTP_HX_REQUEST="true"
        )
        assert refused.status_code == 422 and "Listen to" in refused.content.decode()
        listened_to_all(item)
        response = client.post(
            f"/s/{study.slug}/task/items/{item_id}/submit", answer_for(page, form_item), HTTP_HX_REQUEST="true"
        )
        assert response.status_code == 200, response.content.decode()

    assert sorted(seen_types) == ["pairwise", "rating", "rating", "single_choice", "stance", "stressed_words"]
    assert response["HX-Redirect"] == f"/s/{study.slug}/done/"
    answers = {a.item.study_item.form_item.external_id: (a.levels, a.response) for a in Annotation.objects.all()}
    assert answers["choice"] == ([], {"choice": 1})
    assert answers["pair"] == ([], {"prefer": "b"})
    assert answers["mos"] == ([], {"value": 4.0}) and answers["slider"] == ([], {"value": 73.0})
    assert answers["warm"][1]["pole"] == "N" and answers["warm"][1]["confidence"] == 0.8
    assert answers["warm"][1]["pole_order"] in ("PN", "NP")
    assert answers["ssd"] == ([0, 0, 0, 1, 0, 0, 0], {})


def test_invalid_form_answers_are_refused_with_the_reason(client):
    study = live_form(
        specs=lambda clips: [
            ListeningFormItemSpec("c", ListeningFormItem.Type.SINGLE_CHOICE, clips[0], options=["x", "y"], gold=0)
        ]
    )
    enter(client, study)
    page = client.get(f"/s/{study.slug}/task/").content.decode()
    item_id = int(re.search(r'data-item="(\d+)"', page).group(1))

    for bad in ({}, {"choice": "7"}, {"choice": "x"}):
        response = client.post(f"/s/{study.slug}/task/items/{item_id}/submit", bad, HTTP_HX_REQUEST="true")
        assert response.status_code == 422
    assert not Annotation.objects.exists()


def test_option_order_is_randomized_per_participant_and_recorded(client):
    from django.test import Client

    study = live_form(
        specs=lambda clips: [
            ListeningFormItemSpec(
                "c", ListeningFormItem.Type.SINGLE_CHOICE, clips[0], options=[f"option {n}" for n in range(6)], gold=0
            )
        ],
        target_annotations=12,
    )
    orders = set()
    for n in range(8):
        browser = Client()
        browser.get(f"/s/{study.slug}/?PROLIFIC_PID={n:024x}")
        browser.post(f"/s/{study.slug}/consent/", {"agree": "yes"})
        browser.post(
            f"/s/{study.slug}/screening/",
            {f"q{q.pk}": q.accepted[0] for q in PrerequisiteQuestion.objects.filter(study=study)},
        )
        browser.post(f"/s/{study.slug}/instructions/")
        page = browser.get(f"/s/{study.slug}/task/").content.decode()
        shown = re.findall(r"option (\d)", page)
        participant = study.participants.get(prolific_pid=f"{n:024x}")
        recorded = participant.tasks.get().items.get().presentation
        assert [int(x) for x in shown] == recorded["option_order"] and "seed" in recorded
        orders.add(tuple(shown))
    assert len(orders) > 1


def two_questions_and_a_check(clips):
    return [
        ListeningFormItemSpec("q1", ListeningFormItem.Type.SINGLE_CHOICE, clips[0], options=["x", "y"], gold=0),
        ListeningFormItemSpec("q2", ListeningFormItem.Type.SINGLE_CHOICE, clips[1], options=["x", "y"], gold=1),
        ListeningFormItemSpec(
            "check",
            ListeningFormItem.Type.SINGLE_CHOICE,
            clips[2],
            options=["pick me", "not me"],
            gold=0,
            settings={"attention_check": True},
        ),
    ]


def test_form_attention_checks_are_slipped_in_recorded_and_never_scored(client):
    from annotation.models import StudyItem
    from evaluation.selectors.listening_form_reports import listening_form_report_data

    study = live_form(specs=two_questions_and_a_check, clips_per_task=2, attention_checks_per_task=1)
    enter(client, study)
    participant = study.participants.get()
    task = participant.tasks.get()
    assert task.items.count() == 3
    for _ in range(3):
        page = client.get(f"/s/{study.slug}/task/").content.decode()
        assert "attention" not in page_text_for_leaks(page) and "gold" not in page_text_for_leaks(page)
        item = task.items.get(pk=int(re.search(r'data-item="(\d+)"', page).group(1)))
        listened(item)
        client.post(f"/s/{study.slug}/task/items/{item.pk}/submit", {"choice": "0"}, HTTP_HX_REQUEST="true")

    check = Annotation.objects.get(item__study_item__form_item__external_id="check")
    assert check.attention_passed is True
    assert set(Annotation.objects.exclude(pk=check.pk).values_list("attention_passed", flat=True)) == {None}
    check_item = StudyItem.objects.get(form_item__external_id="check")
    assert (check_item.completed_count, check_item.reserved_count) == (0, 0)
    scored = [row["item"] for row in listening_form_report_data(study=study)["single_choice"]["per_item"]]
    assert "check" not in scored and len(scored) == 2


def test_rejecting_a_form_participant_takes_out_their_answers_but_not_their_check(client):
    """A rejection takes a participant's answers out of their items' counts; a check item's count
    never held them (a submission does not count it), so it is left as it is, not taken below 0."""
    from annotation.models import StudyItem
    from annotation.services.review import participant_decide

    study = live_form(specs=two_questions_and_a_check, clips_per_task=2, attention_checks_per_task=1)
    enter(client, study)
    participant = study.participants.get()
    task = participant.tasks.get()
    for _ in range(3):
        page = client.get(f"/s/{study.slug}/task/").content.decode()
        item = task.items.get(pk=int(re.search(r'data-item="(\d+)"', page).group(1)))
        listened(item)
        client.post(f"/s/{study.slug}/task/items/{item.pk}/submit", {"choice": "0"}, HTTP_HX_REQUEST="true")
    counts = dict(StudyItem.objects.filter(study=study).values_list("form_item__external_id", "completed_count"))
    assert counts == {"q1": 1, "q2": 1, "check": 0}

    participant_decide(participant=participant, decision="rejected", note="x" * 120, category="LOW_EFFORT")

    counts = dict(StudyItem.objects.filter(study=study).values_list("form_item__external_id", "completed_count"))
    assert counts == {"q1": 0, "q2": 0, "check": 0}


def test_participant_review_works_for_form_studies(client):
    from annotation.selectors.review import participant_review_rows

    study = live_form(specs=every_type)
    enter(client, study)
    participant = study.participants.get()
    task = participant.tasks.get()
    for _ in range(2):
        page = client.get(f"/s/{study.slug}/task/").content.decode()
        item = task.items.get(pk=int(re.search(r'data-item="(\d+)"', page).group(1)))
        listened_to_all(item)
        client.post(
            f"/s/{study.slug}/task/items/{item.pk}/submit",
            answer_for(page, item.study_item.form_item),
            HTTP_HX_REQUEST="true",
        )

    rows = participant_review_rows(study=study)

    [row] = rows
    assert (row.prolific_pid, row.clips) == (PID, 2)
    assert row.kappa is None and row.kappa_reason  # no word agreement to compute from two form answers


def test_form_study_instructions_show_no_emphasis_marking_help(client):
    study = live_form(specs=every_type, instructions="Answer each question about the clip.")
    client.get(f"/s/{study.slug}/?PROLIFIC_PID={PID}")
    client.post(f"/s/{study.slug}/consent/", {"agree": "yes"})
    answers = {f"q{q.pk}": q.accepted[0] for q in PrerequisiteQuestion.objects.filter(study=study)}
    client.post(f"/s/{study.slug}/screening/", answers)

    page = client.get(f"/s/{study.slug}/instructions/").content.decode()

    assert "Answer each question about the clip." in page
    assert "How to mark words" not in page and "heavily emphasized" not in page and 'class="legend' not in page


def test_a_submit_to_an_item_not_yet_shown_reveals_nothing_of_it(client):
    """The turn is checked before the answer is read: the answer form's checks (a rating's range,
    the number of options or words) would otherwise describe an item the participant has not seen."""
    study = live_form(specs=every_type)
    enter(client, study)
    task = study.participants.get().tasks.get()
    pending = list(task.items.order_by("position"))
    answers = [{"value": "999"}, {"choice": "9"}, {"prefer": "x"}, {"pole": "Q", "confidence": "-5"}, {}]

    replies = [
        client.post(f"/s/{study.slug}/task/items/{item.pk}/submit", answer, HTTP_HX_REQUEST="true")
        for item in pending[1:]
        for answer in answers
    ]

    texts = {reply.content.decode().strip() for reply in replies}
    assert {reply.status_code for reply in replies} == {422}
    assert len(texts) == 1 and "this is not the current clip" in texts.pop()
    assert not Annotation.objects.exists()
