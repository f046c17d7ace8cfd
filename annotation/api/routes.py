"""annotation's resources under /api/v1/ (composed in config/urls.py by annotation.shared.api.routers)."""

from annotation.api.annotations import StudyAnnotationViewSet
from annotation.api.clips import ClipViewSet
from annotation.api.corpora import CorpusViewSet
from annotation.api.corpus_writes import CorpusClipViewSet, CorpusWordViewSet, ImportJobViewSet
from annotation.api.studies import StudyViewSet
from annotation.api.webhooks import WebhookEndpointViewSet
from annotation.shared.api.routers import Route

ROUTES: list[Route] = [
    ("corpora", CorpusViewSet, "corpus"),
    ("corpora/<int:corpus_pk>/clips", CorpusClipViewSet, "corpus-clip"),
    ("corpora/<int:corpus_pk>/words", CorpusWordViewSet, "corpus-word"),
    ("import-jobs", ImportJobViewSet, "import-job"),
    ("clips", ClipViewSet, "clip"),
    ("studies", StudyViewSet, "study"),
    ("studies/<int:study_pk>/annotations", StudyAnnotationViewSet, "study-annotation"),
    ("webhook-endpoints", WebhookEndpointViewSet, "webhook-endpoint"),
]
