"""prolific's resources under /api/v1/ (composed in config/urls.py by annotation.shared.api.routers)."""

from annotation.shared.api.routers import Route
from prolific.api.bonuses import BonusBatchViewSet
from prolific.api.studies import ProlificStudyJobViewSet, ProlificStudyViewSet
from prolific.api.submissions import ProlificSubmissionViewSet

ROUTES: list[Route] = [
    ("bonus-batches", BonusBatchViewSet, "bonus-batch"),
    ("prolific-submissions", ProlificSubmissionViewSet, "prolific-submission"),
    ("prolific-studies", ProlificStudyViewSet, "prolific-study"),
    ("prolific-study-jobs", ProlificStudyJobViewSet, "prolific-study-job"),
]
