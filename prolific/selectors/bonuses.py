"""What a study's bonus batches have paid through Prolific, for the cost so far (issue 22)."""

from django.db.models import Sum

from annotation.models import Study
from prolific.models import BonusBatch


def bonuses_paid_cents(*, study: Study) -> int:
    """Cents of bonus in the study's batches Prolific's record shows paid (Prolific's fee on them is
    added by the cost)."""
    paid = BonusBatch.objects.filter(study=study, stage=BonusBatch.Stage.PAID).aggregate(total=Sum("amount_cents"))
    return paid["total"] or 0
