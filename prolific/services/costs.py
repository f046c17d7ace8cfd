"""What a study on Prolific costs: the preview before publishing, and the cost so far.

Prolific charges its service fee on what participants are paid, bonuses included ("Commission is
still charged on this type of participant payment", researcher help, "Bonus payments"); the rate
is PROLIFIC_SERVICE_FEE (33.3 %, Prolific's published rate for academic researchers, by default;
VAT, where it applies, comes on top and is not counted here). Amounts are in cents of the
account's currency, as Prolific counts them.
"""

import math
from dataclasses import dataclass

from django.conf import settings

from annotation.models import Participant
from prolific.models import ProlificStudy


@dataclass(frozen=True)
class Cost:
    rewards: int  # reward x places (preview) or x completed submissions (so far)
    screen_outs: int  # the fixed screen-out payments: at most slots x payment (preview)
    bonuses: int
    fee_rate: float

    @property
    def paid_to_participants(self) -> int:
        return self.rewards + self.screen_outs + self.bonuses

    @property
    def fee(self) -> int:
        return math.ceil(self.paid_to_participants * self.fee_rate)

    @property
    def total(self) -> int:
        return self.paid_to_participants + self.fee


def prolific_cost_preview(prolific_study: ProlificStudy, *, places: int | None = None) -> Cost:
    """Before publishing: every place paid, every screen-out slot used, the bonuses planned."""
    places = prolific_study.places if places is None else places
    return Cost(
        rewards=prolific_study.reward_cents * places,
        screen_outs=prolific_study.screen_out_reward_cents * prolific_study.screen_out_slots,
        bonuses=prolific_study.bonus_budget_cents,
        fee_rate=settings.PROLIFIC_SERVICE_FEE,
    )


def prolific_cost_so_far(prolific_study: ProlificStudy, *, bonuses_paid: int = 0) -> Cost:
    """While it runs: participants who completed and are not rejected (Prolific pays them on
    approval), those our screening sent away, and the bonuses paid."""
    people = Participant.objects.filter(study=prolific_study.study).exclude(prolific_pid="")
    completed = people.filter(completed_at__isnull=False).exclude(decision=Participant.Decision.REJECTED).count()
    screened_out = people.filter(screened_out=True).count()
    return Cost(
        rewards=prolific_study.reward_cents * completed,
        screen_outs=prolific_study.screen_out_reward_cents * min(screened_out, prolific_study.screen_out_slots),
        bonuses=bonuses_paid,
        fee_rate=settings.PROLIFIC_SERVICE_FEE,
    )


def money(cents: int, currency: str = "") -> str:
    return f"{cents / 100:,.2f}" + (f" {currency}" if currency else "")
