from annotation.models.corpus import Clip, ClipWarning, Corpus, ImportJob, Speaker, Word
from annotation.models.headphone_check import HeadphoneTrial
from annotation.models.idempotency import ApiIdempotencyKey
from annotation.models.import_slots import ImportSlot
from annotation.models.listening_forms import ListeningFormItem
from annotation.models.participation import Annotation, Participant, PlaybackEvent, Task, TaskItem
from annotation.models.prolific_bonuses import BonusBatch, BonusLine, BonusPayJob
from annotation.models.prolific_send import ProlificSendJob
from annotation.models.prolific_study import ProlificCall, ProlificParticipantGroup, ProlificStudy, ProlificStudyJob
from annotation.models.prolific_submissions import (
    ProlificSubmission,
    ProlificWebhookReceipt,
    ProlificWebhookSecret,
    ProlificWebhookSubscription,
)
from annotation.models.study import AttentionCheck, PrerequisiteQuestion, Study, StudyItem
from annotation.models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent

__all__ = [
    "Annotation",
    "ApiIdempotencyKey",
    "AttentionCheck",
    "BonusBatch",
    "BonusLine",
    "BonusPayJob",
    "Clip",
    "ClipWarning",
    "Corpus",
    "HeadphoneTrial",
    "ImportJob",
    "ImportSlot",
    "ListeningFormItem",
    "Participant",
    "PlaybackEvent",
    "PrerequisiteQuestion",
    "ProlificCall",
    "ProlificParticipantGroup",
    "ProlificSendJob",
    "ProlificStudy",
    "ProlificStudyJob",
    "ProlificSubmission",
    "ProlificWebhookReceipt",
    "ProlificWebhookSecret",
    "ProlificWebhookSubscription",
    "Speaker",
    "Study",
    "StudyItem",
    "Task",
    "TaskItem",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
    "Word",
]
