from annotation.models.corpus import Clip, ClipWarning, Corpus, ImportJob, Speaker, Word
from annotation.models.headphone_check import HeadphoneTrial
from annotation.models.idempotency import ApiIdempotencyKey
from annotation.models.import_slots import ImportSlot
from annotation.models.listening_forms import ListeningFormItem
from annotation.models.participation import Annotation, Participant, PlaybackEvent, Task, TaskItem
from annotation.models.study import AttentionCheck, PrerequisiteQuestion, Study, StudyItem
from annotation.models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent

__all__ = [
    "Annotation",
    "ApiIdempotencyKey",
    "AttentionCheck",
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
