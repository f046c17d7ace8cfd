"""The GPU worker's tasks (routed to the `gpu` queue by CELERY_TASK_ROUTES in settings)."""

from celery import shared_task


# acks_late: a worker killed mid-run leaves its message unacknowledged and the run RUNNING; the
# stale-job sweep queues it again and the claim (annotation.shared.jobs) lets exactly one worker take it.
@shared_task(name="modelzoo.benchmark_run_train", acks_late=True)
def benchmark_run_train_task(run_id: int) -> None:
    # Inside the body: the training stack (torch, transformers) is loaded by the GPU worker only,
    # never by the web processes that import this module to send the task.
    from modelzoo.services.benchmark_training import benchmark_run_train

    benchmark_run_train(run_id=run_id)


# acks_late as above: the claim makes a second delivery do nothing, and the outputs are replaced
# in one transaction, so a run done again leaves one set of predictions.
@shared_task(name="modelzoo.detection_run_predict", acks_late=True)
def detection_run_predict_task(run_id: int) -> None:
    # Inside the body, as above: the detector (and torch) is loaded by the GPU worker only.
    from modelzoo.services.detection_runs import detection_run_predict

    detection_run_predict(run_id=run_id)
