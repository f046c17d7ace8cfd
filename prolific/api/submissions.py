"""Prolific's submissions as the platform knows them (issue 22; prolific.services.submissions):

GET  /prolific-submissions/        what Prolific said of each submission, by poll or webhook, and the
                                   task it released (prolific.view_prolificsubmission)
POST /prolific-submissions/poll/   poll Prolific now for the studies with open tasks
                                   (annotation.change_participant): what was read and released
"""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import mixins, serializers
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from annotation.shared.api.base import ApiViewSet
from prolific.client import ProlificClient
from prolific.models import ProlificSubmission
from prolific.services.submissions import prolific_submissions_poll


class ProlificSubmissionSerializer(serializers.ModelSerializer):
    class Meta:
        model = ProlificSubmission
        fields = ["id", "submission_id", "prolific_study_id", "participant", "status", "status_at", "source"]
        fields += ["released_task"]


PollOutcome = inline_serializer(
    "ProlificPollOutcome",
    fields={
        "studies": serializers.IntegerField(),
        "submissions": serializers.IntegerField(),
        "released": serializers.IntegerField(),
        "errors": serializers.DictField(child=serializers.CharField()),
    },
)


class ProlificSubmissionViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    queryset = ProlificSubmission.objects.order_by("-status_at", "-pk")
    serializer_class = ProlificSubmissionSerializer
    filterset_fields = ["status", "source", "prolific_study_id"]

    @extend_schema(
        request=None,
        responses={200: PollOutcome},
        description="Read the submissions of every Prolific study with an open task here, record their "
        "statuses, and give the clips of returned, timed-out and rejected ones back to the pool.",
    )
    @action(detail=False, methods=["post"], url_path="poll", required_perms=("annotation.change_participant",))
    def poll(self, request):
        client = ProlificClient.from_settings()
        if client is None:
            raise ValidationError({"detail": ["PROLIFIC_API_TOKEN is not set: nothing to poll"]})
        return Response(prolific_submissions_poll(client=client))
