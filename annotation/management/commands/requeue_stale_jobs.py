from django.core.management.base import BaseCommand

from annotation.shared.jobs import stale_jobs_requeue_every_kind


class Command(BaseCommand):
    help = (
        "Queue again the background jobs whose worker stopped (silent for longer than their kind's "
        "STALE_AFTER), fail those started too often, and resend those no worker took. For cron."
    )

    def handle(self, *args, **options):
        results = stale_jobs_requeue_every_kind()
        for label, counts in results.items():
            if any(counts.values()):
                self.stdout.write(f"{label}: " + ", ".join(f"{n} {what}" for what, n in counts.items()))
        totals = {what: sum(counts[what] for counts in results.values()) for what in ("requeued", "failed", "resent")}
        self.stdout.write(
            f"stale jobs: {totals['requeued']} requeued, {totals['failed']} failed, {totals['resent']} resent"
        )
