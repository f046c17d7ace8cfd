"""A study run on Prolific: the draft we create there from ours, its places and filters, the
participant groups we keep there, and every call made to Prolific's API (ProlificCall)."""

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotation.models.background_job import BackgroundJob
from annotation.models.study import Study, new_code


class ProlificCall(models.Model):
    """One attempt at one call to Prolific's API and its answer (prolific.client.calls).
    The token is never stored; body fields named like a secret are masked."""

    study = models.ForeignKey(Study, on_delete=models.SET_NULL, null=True, blank=True, related_name="prolific_calls")
    method = models.CharField(max_length=8)
    path = models.CharField(max_length=300, help_text="Below PROLIFIC_API_URL.")
    request_body = models.JSONField(null=True, blank=True)
    attempt = models.PositiveSmallIntegerField(default=1, help_text="2 and up: a retry (429, or 5xx on a safe call).")
    status = models.PositiveSmallIntegerField(help_text="Prolific's HTTP status; 0 when no answer came.")
    response_body = models.JSONField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True, help_text="Why no answer came.")
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.method} {self.path} -> {self.status or 'no answer'}"


class ProlificParticipantGroup(models.Model):
    """A participant group on Prolific (for keeping one study's annotators out of another)."""

    prolific_id = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    source_study = models.ForeignKey(
        Study, on_delete=models.SET_NULL, null=True, blank=True, related_name="prolific_groups_fed"
    )
    participant_count = models.PositiveIntegerField(default=0, help_text="As Prolific last reported it.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name


class ProlificStudy(models.Model):
    """The Prolific side of one of our studies: what we send when creating its draft, and what
    Prolific last told us (status, places). prolific.services.studies writes it."""

    class Status(models.TextChoices):
        # Prolific's own names (docs.prolific.com, "The study object", status).
        NOT_CREATED = "", "Not created on Prolific yet"
        UNPUBLISHED = "UNPUBLISHED", "Unpublished (draft)"
        PUBLISHING = "PUBLISHING", "Publishing"
        SCHEDULED = "SCHEDULED", "Scheduled"
        ACTIVE = "ACTIVE", "Active"
        PAUSED = "PAUSED", "Paused"
        AWAITING_REVIEW = "AWAITING REVIEW", "Awaiting review"
        COMPLETED = "COMPLETED", "Completed"

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="prolific")
    prolific_id = models.CharField(max_length=64, blank=True, db_index=True, help_text="Prolific's study id.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.NOT_CREATED, blank=True)

    name = models.CharField(max_length=200, help_text="The title participants see on Prolific.")
    description = models.TextField(help_text="What participants read before they take part.")
    estimated_minutes = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1)], help_text="Proposed from the clips; accept it or change it."
    )
    hourly_rate_cents = models.PositiveIntegerField(
        default=1500, validators=[MinValueValidator(1)], help_text="Pay per hour in cents (1500: 15.00)."
    )
    reward_cents = models.PositiveIntegerField(help_text="Pay per place in cents: the hourly rate × estimated time.")
    places = models.PositiveIntegerField(validators=[MinValueValidator(1)], help_text="Prolific's places (to start).")
    places_ceiling = models.PositiveIntegerField(
        null=True, blank=True, help_text="Most places the top-ups may grow the study to; empty: no growth."
    )
    auto_grow = models.BooleanField(
        default=False, help_text="While the study is active, add the places the clips still need (a periodic job)."
    )
    device_compatibility = models.JSONField(default=list, help_text='e.g. ["desktop"]')
    peripheral_requirements = models.JSONField(default=list, help_text='e.g. ["audio"]')

    # The screeners (Prolific's filters). MMEE's: first and fluent language the study's language,
    # no hearing or literacy difficulties, undergraduate degree or higher, approval 99-100 %,
    # at least 25 approved studies.
    language = models.CharField(max_length=60, help_text="First and fluent language, as Prolific names it.")
    approval_rate_min = models.PositiveSmallIntegerField(default=99, validators=[MaxValueValidator(100)])
    approval_rate_max = models.PositiveSmallIntegerField(default=100, validators=[MaxValueValidator(100)])
    approvals_min = models.PositiveIntegerField(default=25, help_text="Fewest approved studies a participant has.")
    education = models.JSONField(
        default=list, blank=True, help_text="Education levels accepted, as Prolific names them."
    )
    no_hearing_difficulties = models.BooleanField(default=True)
    no_literacy_difficulties = models.BooleanField(default=True)
    exclude_group = models.ForeignKey(
        ProlificParticipantGroup,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="excluded_from",
        help_text="Participants in this group cannot take the study.",
    )

    attention_failed_code = models.CharField(max_length=32, default=new_code)
    screen_out_reward_cents = models.PositiveIntegerField(
        default=10, help_text="Fixed pay for a participant our screening sends away, in cents."
    )
    screen_out_slots = models.PositiveIntegerField(
        default=50, validators=[MinValueValidator(1)], help_text="Most participants Prolific lets us screen out."
    )
    bonus_budget_cents = models.PositiveIntegerField(default=0, help_text="Bonuses planned, for the cost preview.")

    body_sent = models.JSONField(null=True, blank=True, editable=False, help_text="The draft as we created it.")
    total_available_places = models.PositiveIntegerField(null=True, blank=True, editable=False)
    synced_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "Prolific study"
        verbose_name_plural = "Prolific studies"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(approval_rate_min__lte=models.F("approval_rate_max")), name="prolific_approval_range"
            ),
            models.CheckConstraint(
                condition=models.Q(places_ceiling__isnull=True) | models.Q(places_ceiling__gte=models.F("places")),
                name="prolific_ceiling_at_least_places",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study} on Prolific"

    @property
    def created_on_prolific(self) -> bool:
        return bool(self.prolific_id)


class ProlificStudyJob(BackgroundJob):
    """One thing asked of Prolific for a study, run by a worker (prolific.services.study_jobs):
    create the draft, publish, pause, resume, stop, grow places, refresh, or add to a group."""

    TASK_NAME = "prolific.prolific_study_job_run"

    class Action(models.TextChoices):
        CREATE = "create", "Create the draft on Prolific"
        PUBLISH = "publish", "Publish"
        PAUSE = "pause", "Pause"
        RESUME = "resume", "Resume"
        STOP = "stop", "Stop"
        GROW = "grow", "Grow places"
        SYNC = "sync", "Refresh from Prolific"
        GROUP = "group", "Add to a participant group"

    prolific_study = models.ForeignKey(ProlificStudy, on_delete=models.CASCADE, related_name="jobs")
    action = models.CharField(max_length=10, choices=Action.choices)
    site_url = models.URLField(blank=True, help_text="Our address, for the study link sent to Prolific.")
    group = models.ForeignKey(ProlificParticipantGroup, on_delete=models.SET_NULL, null=True, blank=True)
    group_name = models.CharField(max_length=200, blank=True)
    members = models.CharField(max_length=12, blank=True, help_text="annotators or rejected")
    outcome = models.TextField(blank=True, help_text="What Prolific did, in a sentence.")

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            # Two at once could both publish, or both create a draft.
            models.UniqueConstraint(
                fields=["prolific_study"],
                condition=models.Q(status__in=["queued", "running"]),
                name="one_unfinished_prolific_study_job",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_action_display()}: {self.prolific_study.study}"
