"""Access checks for the Prolific pages, on annotation.shared.access's `require_perm` (one helper per lookup)."""

from django.shortcuts import get_object_or_404

from annotation.shared.access import require_perm
from prolific.models import ProlificSendJob


def get_prolific_send_job_for_review(request, pk: int) -> ProlificSendJob:
    """A sending of decisions to Prolific: following it needs change_participant, as the review does."""
    require_perm(request, "annotation.change_participant")
    return get_object_or_404(ProlificSendJob, pk=pk)
