"""The GPU worker's tasks (routed to the `gpu` queue by CELERY_TASK_ROUTES in settings)."""

from celery import shared_task


# acks_late: a worker killed mid-run leaves its message unacknowledged and the run RUNNING; the
# stale-job sweep queues it again and the claim (annotation.jobs) lets exactly one worker take it.
@shared_task(acks_late=True)
def benchmark_run_task(run_id: int) -> None:
    # Inside the body: the training stack (torch, transformers) is loaded by the GPU worker only,
    # never by the web processes that import this module to send the task.
    from modelzoo.services.benchmark_training import benchmark_run_train

    benchmark_run_train(run_id=run_id)
