"""The evaluation side's webhook events: a finalized label set, a ready export, a ready report."""

import pytest

from annotation.models import WebhookEndpoint, WebhookEvent
from evaluation.services.agreement_reports import agreement_report_request, report_parameters
from tests.evaluation.builders import golden_study
from tests.evaluation.export_builders import exported, final_label_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint(settings):
    # Nothing listens on port 9: each delivery is tried once and recorded, which is all this checks.
    settings.WEBHOOK_RETRY_SECONDS = [3600]
    return WebhookEndpoint.objects.create(url="http://127.0.0.1:9/hooks", events=WebhookEvent.values)


def events(endpoint) -> list[tuple[str, dict]]:
    return [(d.event_type, d.payload["data"]) for d in endpoint.deliveries.order_by("pk")]


def test_finalizing_a_label_set_and_exporting_it_send_their_events(endpoint, django_capture_on_commit_callbacks):
    label_set = final_label_set(golden_study(), django_capture_on_commit_callbacks)
    export = exported(django_capture_on_commit_callbacks, format="jsonl", label_set=label_set)

    sent = events(endpoint)
    assert [event for event, _ in sent] == ["label_set.finalized", "dataset_export.ready"]
    assert sent[0][1] == {
        "label_set": label_set.pk,
        "name": label_set.name,
        "version": 1,
        "checksum": label_set.checksum,
    }
    assert sent[1][1]["dataset_export"] == export.pk and sent[1][1]["format"] == "jsonl"


def test_a_computed_agreement_report_sends_its_event(endpoint, django_capture_on_commit_callbacks):
    study = golden_study()
    with django_capture_on_commit_callbacks(execute=True):
        report = agreement_report_request(study=study, parameters=report_parameters(study=study, resamples=20))

    assert events(endpoint) == [
        (
            "agreement_report.ready",
            {
                "id": report.pk,
                "status": "succeeded",
                "error": "",
                "agreement_report": report.pk,
                "study": study.pk,
                "language": "",
            },
        ),
    ]
