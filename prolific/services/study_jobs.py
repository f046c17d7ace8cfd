"""What the admin and the API ask of Prolific for a study, queued as a background job and run
by a worker (annotation.shared.jobs): each is a call or two to Prolific, each allowed its timeout and
retries, so none runs inside a request. One at a time per study (a constraint guards it)."""

from django.conf import settings
from django.db import IntegrityError, transaction

from annotation.shared.jobs import JobFailed, job_enqueue, job_refresh, job_run
from prolific.client import ProlificError
from prolific.models import ProlificStudy, ProlificStudyJob
from prolific.services import studies as service

Action = ProlificStudyJob.Action


class JobBusy(Exception):
    """Another job of this study is under way (it is `job`)."""

    def __init__(self, job: ProlificStudyJob):
        super().__init__(f"{job.get_action_display()} is under way")
        self.job = job


def prolific_study_job_create(*, prolific_study: ProlificStudy, action: str, user=None, **params) -> ProlificStudyJob:
    """Queue `action`; JobBusy when another is queued or running for the same study."""
    if action not in Action.values:
        raise ValueError(f"unknown action {action!r}")
    under_way = prolific_study.jobs.filter(status__in=["queued", "running"]).first()
    if under_way is not None:
        raise JobBusy(job_refresh(under_way))
    try:
        with transaction.atomic():
            job = ProlificStudyJob.objects.create(
                prolific_study=prolific_study, action=action, created_by=user, **params
            )
    except IntegrityError:  # another request queued one a moment ago
        queued = prolific_study.jobs.first()
        if queued is None:  # and it is gone already: the conflict is news to nobody else
            raise
        raise JobBusy(queued) from None
    job_enqueue(job)
    return job


def prolific_study_job_latest(*, prolific_study: ProlificStudy) -> ProlificStudyJob | None:
    job = prolific_study.jobs.select_related("created_by").first()
    return job_refresh(job) if job is not None else None


def prolific_study_job_run(*, job_id: int) -> None:
    job_run(model=ProlificStudyJob, job_id=job_id, work=_work)


def _work(job: ProlificStudyJob, progress) -> dict:
    progress(job.get_action_display(), 0, 1)
    prolific_study = job.prolific_study
    try:
        outcome = _carry_out(job, prolific_study)
    except (ProlificError, service.ProlificSetupError) as error:
        raise JobFailed(str(error), outcome=str(error)) from None
    return {"outcome": outcome}


def _carry_out(job: ProlificStudyJob, prolific_study: ProlificStudy) -> str:
    if job.action == Action.CREATE:
        service.prolific_study_create(
            prolific_study=prolific_study, site_url=job.site_url, filter_ids=settings.PROLIFIC_FILTER_IDS
        )
        return f"Created on Prolific as {prolific_study.prolific_id} ({prolific_study.get_status_display()})."
    if job.action in service.ACTIONS:
        service.prolific_study_act(prolific_study=prolific_study, action=job.action)
        return f"{job.get_action_display()}: Prolific says {prolific_study.get_status_display()}."
    if job.action == Action.GROW:
        return service.prolific_places_grow(prolific_study=prolific_study).summary()
    if job.action == Action.SYNC:
        service.prolific_study_sync(prolific_study=prolific_study)
        return f"Prolific says {prolific_study.get_status_display()}, {prolific_study.total_available_places} places."
    group, added = service.prolific_group_add(
        study=prolific_study.study,
        members=job.members,
        group=job.group,
        name=job.group_name,
        workspace_id=settings.PROLIFIC_WORKSPACE_ID,
    )
    ProlificStudyJob.objects.filter(pk=job.pk).update(group=group)
    return f"Sent {added} participant(s) to the group {group.name}; it has {group.participant_count}."
