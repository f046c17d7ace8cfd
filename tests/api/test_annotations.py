"""A study's raw annotations: opaque annotators, Prolific ids only on request and with the review
permission, filters, and pages."""

from datetime import UTC, datetime, timedelta

import pytest

from annotation.models import Annotation, Participant
from annotation.participant_names import opaque_annotator_id
from tests.annotation.factories import AnnotationFactory, ParticipantFactory, TaskFactory, TaskItemFactory
from tests.api.callers import staff_with, token_client
from tests.evaluation.builders import golden_study

pytestmark = pytest.mark.django_db
VIEW = "annotation.view_annotation"


@pytest.fixture
def study():
    return golden_study()


@pytest.fixture
def api():
    return token_client(staff_with(VIEW))


def url(study) -> str:
    return f"/api/v1/studies/{study.pk}/annotations/"


def every_row(api, study, **filters) -> list[dict]:
    response = api.get(url(study), {"page_size": 500, **filters})
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_annotators_are_opaque_ids_as_in_label_sets(api, study):
    rows = every_row(api, study)

    pids = set(study.participants.values_list("prolific_pid", flat=True))
    assert {row["annotator"] for row in rows} == {opaque_annotator_id("golden", pid) for pid in pids}
    assert all(row["prolific_id"] is None for row in rows)
    assert not any(pid in str(rows) for pid in pids)


def test_a_participant_without_a_prolific_id_is_local_pk(api, study):
    participant = ParticipantFactory(study=study, prolific_pid="")
    AnnotationFactory(item=TaskItemFactory(task=TaskFactory(participant=participant)))

    rows = every_row(api, study, decision="pending")

    assert opaque_annotator_id("golden", f"local-{participant.pk}") in {row["annotator"] for row in rows}


def test_prolific_ids_need_the_review_permission(api, study):
    refused = api.get(url(study), {"prolific_ids": "true"})
    assert refused.status_code == 403

    reviewer = token_client(staff_with(VIEW, "annotation.change_participant"))
    rows = every_row(reviewer, study, prolific_ids="true")
    assert {row["prolific_id"] for row in rows} == set(study.participants.values_list("prolific_pid", flat=True))


def test_a_row_shows_the_answer_and_its_clip(api, study):
    annotation = Annotation.objects.filter(participant__study=study, item__attention_check=None).first()

    row = next(row for row in every_row(api, study) if row["id"] == annotation.pk)

    assert row["clip"] == annotation.clip_id
    assert row["clip_id"] == annotation.clip.external_id
    assert row["language"] == annotation.clip.language
    assert row["levels"] == annotation.levels
    assert row["attention_check"] is False
    assert row["participant_decision"] == "pending" and row["participant_status"] == "in_progress"


def test_filters_by_clip_language_and_attention_checks(api, study):
    german = every_row(api, study, language="de", attention_check="false")
    checks = every_row(api, study, attention_check="true")

    expected = Annotation.objects.filter(participant__study=study, clip__language="de", item__attention_check=None)
    assert sorted(row["id"] for row in german) == sorted(expected.values_list("pk", flat=True))
    assert len(checks) == 6 and all(row["attention_check"] for row in checks)


def test_filters_by_the_participant_decision_and_status(api, study):
    rejected, finished = study.participants.order_by("pk")[:2]
    Participant.objects.filter(pk=rejected.pk).update(decision=Participant.Decision.REJECTED)
    Participant.objects.filter(pk=finished.pk).update(completed_at=datetime.now(UTC))

    by_decision = every_row(api, study, decision="rejected")
    by_status = every_row(api, study, participant_status="completed")

    assert {row["annotator"] for row in by_decision} == {opaque_annotator_id("golden", rejected.prolific_pid)}
    assert {row["annotator"] for row in by_status} == {opaque_annotator_id("golden", finished.prolific_pid)}
    assert {row["participant_status"] for row in by_status} == {"completed"}


def test_filters_by_submission_date_both_days_included(api, study):
    first, second, third = Annotation.objects.filter(participant__study=study).order_by("pk")[:3]
    day = datetime(2024, 3, 10, 23, 59, tzinfo=UTC)
    Annotation.objects.filter(pk=first.pk).update(submitted_at=day - timedelta(days=1))
    Annotation.objects.filter(pk=second.pk).update(submitted_at=day)
    Annotation.objects.filter(pk=third.pk).update(submitted_at=day + timedelta(days=1))

    rows = every_row(api, study, submitted_after="2024-03-09", submitted_before="2024-03-10")

    assert [row["id"] for row in rows] == [first.pk, second.pk]


def test_bad_filter_values_name_their_field(api, study):
    response = api.get(url(study), {"submitted_after": "yesterday", "participant_status": "gone"})

    assert response.status_code == 400
    assert set(response.json()) == {"submitted", "participant_status"}
    assert api.get(url(study), {"prolific_ids": "perhaps"}).json() == {"prolific_ids": ["Must be a valid boolean."]}


def test_annotations_come_in_pages(api, study):
    total = Annotation.objects.filter(participant__study=study).count()

    first = api.get(url(study), {"page_size": 10}).json()
    last = api.get(first["next"].replace("http://testserver", "")).json()

    assert first["count"] == total and len(first["results"]) == 10 and first["previous"] is None
    assert last["previous"] and not {r["id"] for r in first["results"]} & {r["id"] for r in last["results"]}
    assert len(api.get(url(study)).json()["results"]) == min(total, 50)  # the default page
    assert api.get(url(study), {"page": 99}).json() == {"detail": "Invalid page."}


def test_a_page_is_never_larger_than_the_maximum(api, study, monkeypatch):
    from annotation.shared.api.pagination import PageNumberPagination

    monkeypatch.setattr(PageNumberPagination, "max_page_size", 7)

    assert len(api.get(url(study), {"page_size": 1000}).json()["results"]) == 7


def test_a_missing_study_is_404_after_the_permission_check(api):
    assert api.get("/api/v1/studies/999999/annotations/").json() == {"detail": "No Study matches the given query."}
    assert token_client(staff_with()).get("/api/v1/studies/999999/annotations/").status_code == 403
