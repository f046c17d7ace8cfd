"""The objects the API's endpoints act on, each made the first time a test asks for it: a golden
study with its annotations, a succeeded agreement report, a built draft label set, a final one,
and a succeeded JSONL export of the final one."""

from functools import cached_property

from evaluation.models import LabelSet
from evaluation.services.agreement_reports import agreement_report_request, report_parameters
from evaluation.services.label_sets import label_set_create, label_set_default_parameters
from tests.evaluation.builders import golden_study
from tests.evaluation.export_builders import exported, final_label_set


class World:
    def __init__(self, capture):
        self.capture = capture  # pytest-django's django_capture_on_commit_callbacks: runs the eager worker

    @cached_property
    def study(self):
        return golden_study()

    @cached_property
    def prolific_study(self):
        from prolific.models import ProlificStudy
        from tests.annotation.factories import StudyFactory

        return ProlificStudy.objects.create(
            study=StudyFactory(), name="n", description="d", estimated_minutes=4, reward_cents=100, places=6,
            language="English",
        )  # fmt: skip

    @cached_property
    def prolific_job(self):
        return self.prolific_study.jobs.create(action="sync")

    @cached_property
    def corpus(self):
        return self.study.corpus

    @cached_property
    def clip(self):
        return self.study.items.first().clip

    @cached_property
    def report(self):
        with self.capture(execute=True):
            return agreement_report_request(
                study=self.study, parameters=report_parameters(study=self.study, resamples=0)
            )

    @cached_property
    def draft(self) -> LabelSet:
        parameters = label_set_default_parameters(studies=[self.study], resamples=0)
        with self.capture(execute=True):
            label_set = label_set_create(name="draft labels", studies=[self.study], parameters=parameters)
        label_set.refresh_from_db()
        return label_set

    @cached_property
    def final(self) -> LabelSet:
        return final_label_set(self.study, self.capture, name="final labels")

    @cached_property
    def export(self):
        return exported(self.capture, format="jsonl", label_set=self.final)
