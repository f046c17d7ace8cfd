from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Corpora and annotation"

    def ready(self):
        # The job runner (annotation.shared.jobs) sits below the services: it learns here who listens for
        # the end of jobs, instead of importing them.
        from annotation.services.webhooks import webhook_jobs_ended
        from annotation.shared.jobs import job_end_listen

        job_end_listen(webhook_jobs_ended)
