from prolific.models.bonuses import BonusBatch, BonusLine, BonusPayJob
from prolific.models.send import ProlificSendJob
from prolific.models.study import ProlificCall, ProlificParticipantGroup, ProlificStudy, ProlificStudyJob
from prolific.models.submissions import (
    ProlificSubmission,
    ProlificWebhookJob,
    ProlificWebhookReceipt,
    ProlificWebhookSecret,
    ProlificWebhookSubscription,
)

__all__ = [
    "BonusBatch",
    "BonusLine",
    "BonusPayJob",
    "ProlificCall",
    "ProlificParticipantGroup",
    "ProlificSendJob",
    "ProlificStudy",
    "ProlificStudyJob",
    "ProlificSubmission",
    "ProlificWebhookJob",
    "ProlificWebhookReceipt",
    "ProlificWebhookSecret",
    "ProlificWebhookSubscription",
]
