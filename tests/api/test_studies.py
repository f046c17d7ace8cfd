"""Studies: their progress as the admin counts it, filters, and status changes through the service."""

import pytest
from django.utils import timezone

from annotation.models import Participant, Study, StudyItem
from tests.annotation.factories import ParticipantFactory, StudyFactory, StudyItemFactory
from tests.api.callers import staff_with, token_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return token_client(staff_with("annotation.view_study", "annotation.change_study"))


def test_a_study_shows_its_progress(api):
    study = StudyFactory(target_annotations=3)
    StudyItemFactory(study=study, completed_count=3)
    StudyItemFactory(study=study, completed_count=1, review=StudyItem.Review.NEEDS_REVIEW)
    ParticipantFactory(study=study, completed_at=timezone.now(), decision=Participant.Decision.APPROVED)
    ParticipantFactory(study=study, completed_at=timezone.now(), decision=Participant.Decision.REJECTED)
    ParticipantFactory(study=study, screened_out=True)
    ParticipantFactory(study=study)

    response = api.get(f"/api/v1/studies/{study.pk}/")

    assert response.status_code == 200
    assert response.json()["progress"] == {
        "clips": 2,
        "clips_to_review": 1,
        "annotations_done": 4,
        "annotations_target": 6,
        "participants": {
            "total": 4,
            "completed": 2,
            "screened_out": 1,
            "in_progress": 1,
            "decisions": {"pending": 2, "approved": 1, "rejected": 1, "return_requested": 0},
        },
    }


def test_a_study_without_clips_or_participants_counts_zeros(api):
    study = StudyFactory()

    progress = api.get(f"/api/v1/studies/{study.pk}/").json()["progress"]

    assert progress["clips"] == progress["annotations_done"] == progress["participants"]["total"] == 0


def test_studies_filter_by_status(api):
    live = StudyFactory(status=Study.Status.LIVE)
    StudyFactory(status=Study.Status.DRAFT)

    response = api.get("/api/v1/studies/", {"status": "live"})

    assert [row["id"] for row in response.json()["results"]] == [live.pk]
    assert api.get("/api/v1/studies/", {"status": "open"}).json() == {
        "status": ["Select a valid choice. open is not one of the available choices."]
    }


def test_setting_a_status_goes_through_the_service(api):
    study = StudyFactory(attention_checks_per_task=0)

    response = api.post(f"/api/v1/studies/{study.pk}/status/", {"status": "live"}, format="json")

    assert response.status_code == 200
    assert response.json()["status"] == "live"
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE


def test_a_refused_status_change_says_why(api):
    study = StudyFactory(status=Study.Status.LIVE)
    ParticipantFactory(study=study)

    response = api.post(f"/api/v1/studies/{study.pk}/status/", {"status": "draft"}, format="json")

    assert response.status_code == 400
    assert response.json() == {"status": ["participants have entered it"]}
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE


def test_an_unknown_status_is_a_field_error(api):
    study = StudyFactory()

    response = api.post(f"/api/v1/studies/{study.pk}/status/", {"status": "open"}, format="json")

    assert response.status_code == 400
    assert response.json() == {"status": ['"open" is not a valid choice.']}


def test_the_status_of_a_missing_study_is_404_json(api):
    response = api.post("/api/v1/studies/999999/status/", {"status": "live"}, format="json")

    assert response.status_code == 404
    assert response.json() == {"detail": "No Study matches the given query."}
