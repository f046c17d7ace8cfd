"""A listening-form answer refused as missing keeps the playback reports its submit carried (issue 20, defect 9),
and the page marks its answer inputs required, so that the browser asks before sending."""

import json
import re
from datetime import timedelta
from unittest import mock

import pytest

from annotation.models import Annotation, ListeningFormItem, PlaybackEvent
from annotation.services.listening_forms import ListeningFormItemSpec
from tests.annotation.study_helpers import listened_to_all, live_form
from tests.annotation.test_listening_form_flow import answer_for, enter, every_type
from tests.annotation.test_playback_reports import Page, play_through

pytestmark = pytest.mark.django_db


def one_choice(clips):
    return [ListeningFormItemSpec("c", ListeningFormItem.Type.SINGLE_CHOICE, clips[0], options=["x", "y"], gold=0)]


def submit(client, page: Page, item_id: int, data: dict, *, at: float):
    with mock.patch("django.utils.timezone.now", return_value=page.t0 + timedelta(seconds=at)):
        return client.post(f"/s/{page.study.slug}/task/items/{item_id}/submit", data, HTTP_HX_REQUEST="true")


def test_reports_carried_by_a_submit_without_an_answer_are_kept(client):
    study = live_form(specs=one_choice)
    enter(client, study)
    html = client.get(f"/s/{study.slug}/task/").content.decode()
    item_id = int(re.search(r'data-item="(\d+)"', html).group(1))
    page = Page(client, study, 11)
    steps = play_through(page, 0.0)

    refused = submit(client, page, item_id, {"events": json.dumps(steps)}, at=2.4)

    assert refused.status_code == 422
    assert "This field is required." in refused.content.decode()
    assert PlaybackEvent.objects.filter(item_id=item_id).count() == len(steps)
    # The corrected answer, sent with no reports left to carry, is taken: the listening counted.
    accepted = submit(client, page, item_id, {"choice": "0", "events": "[]"}, at=3.0)
    assert accepted.status_code == 200, accepted.content.decode()
    assert Annotation.objects.get().response == {"choice": 0}


def test_every_answer_input_a_form_item_needs_is_required(client):
    study = live_form(specs=every_type)
    enter(client, study)
    participant = study.participants.get()
    seen = {}
    for _ in range(study.form_items.count()):
        # Each item's page as the participant sees it, answered in turn.
        html = client.get(f"/s/{study.slug}/task/").content.decode()
        form_item = ListeningFormItem.objects.get(
            study_item__taskitem__pk=int(re.search(r'data-item="(\d+)"', html).group(1))
        )
        inputs = re.findall(r"<input[^>]*>", html.split('class="answer')[1].split("</form>")[0])
        answers = [tag for tag in inputs if 'type="hidden"' not in tag]
        seen[form_item.item_type] = answers
        shown = participant.tasks.get().items.get(study_item__form_item=form_item)
        listened_to_all(shown)
        client.post(
            f"/s/{study.slug}/task/items/{shown.pk}/submit", answer_for(html, form_item), HTTP_HX_REQUEST="true"
        )
    for kind, answers in seen.items():
        assert answers, kind
        if kind == ListeningFormItem.Type.STRESSED_WORDS:
            # Marking no word is an answer: the checkboxes are not required.
            assert not any(" required" in tag for tag in answers), answers
        else:
            assert all(" required" in tag for tag in answers), (kind, answers)
