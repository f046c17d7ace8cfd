"""The demo's simulated crowd (manage.py demo_crowd, which `make run` runs): a closed study of the
demo's English clips, every clip annotated by five simulated annotators labelled as such, so that
its agreement report has numbers to show; the demo study itself stays open for a person to try."""

import json

import pytest
from django.core.management import call_command

from annotation.models import Annotation, Study
from evaluation.services.agreement_reports import agreement_report_compute, report_parameters

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path  # demo_setup keeps the admin's password there


def test_the_crowd_study_gets_five_simulated_annotations_a_clip_once(capsys):
    call_command("demo_crowd")
    call_command("demo_crowd")  # as a second `make run`: nothing more

    crowd = Study.objects.get(slug="demo-crowd")
    demo = Study.objects.get(slug="demo")
    assert crowd.status == Study.Status.CLOSED and "simulated" in crowd.name
    assert demo.status == Study.Status.LIVE and not demo.participants.exists()
    assert sorted(set(crowd.items.values_list("completed_count", flat=True))) == [5]
    assert crowd.items.count() == demo.items.count() > 30
    annotations = Annotation.objects.filter(item__task__study=crowd)
    assert annotations.count() == 5 * crowd.items.count()
    assert all(pid.startswith("SIMULATED-") for pid in crowd.participants.values_list("prolific_pid", flat=True))
    assert "simulated annotation(s) added (it has its crowd already)" in capsys.readouterr().out


def test_the_simulated_annotators_mostly_hear_the_intended_word_and_keep_to_the_limits():
    call_command("demo_crowd")
    crowd = Study.objects.get(slug="demo-crowd")

    heard = []
    for annotation in Annotation.objects.filter(item__task__study=crowd).select_related("clip"):
        marked = [index for index, level in enumerate(annotation.levels) if level]
        assert 1 <= len(marked) <= max(1, int(0.3 * len(annotation.levels) + 1e-9))
        heard.append(annotation.clip.metadata["intended_emphasis"][0] in marked)
    assert 0.6 < sum(heard) / len(heard) < 1.0  # a crowd, not an answer key


def test_its_agreement_report_is_defined():
    call_command("demo_crowd")
    crowd = Study.objects.get(slug="demo-crowd")

    report = json.loads(agreement_report_compute(study=crowd, parameters=report_parameters(study=crowd, resamples=50)))

    groups = list(_with_measures(report["agreement"]))
    assert groups  # the whole study, and each group of clips
    for group in groups:
        for measure in (group["fleiss"], group["krippendorff"]["interval"], group["gwet"]["ac1"]):
            assert measure["undefined"] is None and 0.2 < measure["value"] < 1.0, measure


def _with_measures(node):
    if isinstance(node, dict):
        if "fleiss" in node:
            yield node
        for value in node.values():
            yield from _with_measures(value)
