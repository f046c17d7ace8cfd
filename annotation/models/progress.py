class JobProgress:
    """What a background job's page shows; the model has done, total and a
    Status with SUCCEEDED and FAILED."""

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED)
