"""What every background job (report, label set, export) shows while a script polls it."""

from rest_framework.mixins import RetrieveModelMixin
from rest_framework.response import Response

from annotation.shared.jobs import job_refresh

# Status is queued, running, succeeded or failed; phase, done and total describe the progress;
# error says why a failed job failed.
JOB_FIELDS = ["status", "phase", "done", "total", "error", "created_at", "started_at", "finished_at"]


class JobRetrieveMixin(RetrieveModelMixin):
    def retrieve(self, request, *args, **kwargs):
        # As the admin's progress pages: a job whose worker went silent is queued again first.
        job = job_refresh(self.get_object())
        return Response(self.get_serializer(job).data)
