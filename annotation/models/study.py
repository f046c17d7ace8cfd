"""Studies: which clips are annotated, by how many people, under which rules."""

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotation import study_kinds
from annotation.models.corpus import Clip, Corpus
from annotation.refusals import Problem

_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: codes are read and typed


def new_code() -> str:
    return "".join(secrets.choice(_CODE_ALPHABET) for _ in range(8))


class Study(models.Model):
    class Adaptive(models.TextChoices):
        FIXED = "fixed", "Fixed: every clip gets the target"
        EXACT = "exact", "Exact stopping: stop a clip once no listener can change a binary label"
        PROBABILISTIC = "probabilistic", "Probabilistic stopping: stop once a change is unlikely (epsilon)"
        REALLOCATE = "reallocate", "Probabilistic stopping, the saved listeners to contested clips"
        ALLOCATE = "allocate", "Model allocation: the fixed budget, each listener where the model expects most"

    class Predictor(models.TextChoices):
        BETA_BINOMIAL = "beta-binomial", "Beta-binomial: a word is its count of marks"
        ORDINAL = "ordinal", "Ordinal annotator model: the three levels, and who gave them"

    class Status(models.TextChoices):
        DRAFT = "draft"
        LIVE = "live"
        PAUSED = "paused"
        CLOSED = "closed"

    Kind = study_kinds.Kind  # declared with what each kind can do: ask `capabilities`, not the kind

    class HeadphoneCheck(models.TextChoices):
        NONE = "none", "None"
        HUGGINS = "huggins", "Huggins pitch (Milne et al. 2021)"
        ANTIPHASE = "antiphase", "Antiphase tones (Woods et al. 2017)"
        BOTH = "both", "Both: Huggins pitch, then antiphase tones"

    class Scale(models.TextChoices):
        THREE_LEVEL = "three_level", "Three levels (0, 1, 2)"
        BINARY = "binary", "Binary (0 or 1; imported annotations only)"

    name = models.CharField(max_length=200, unique=True)
    slug = models.SlugField(max_length=80, unique=True, help_text="Part of the participant link.")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.EMPHASIS)
    scale = models.CharField(
        max_length=12,
        choices=Scale.choices,
        default=Scale.THREE_LEVEL,
        help_text="Binary: annotations imported from a binary study (e.g. Morrison et al.'s); never set live.",
    )
    corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT, related_name="studies")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.DRAFT, db_index=True)
    selection = models.JSONField(default=dict, blank=True, help_text="The criteria the clips were chosen by.")
    language = models.CharField(max_length=35, blank=True, help_text="The language participants must speak.")
    interface_language = models.CharField(
        max_length=10, choices=settings.LANGUAGES, default="en", help_text="The language of the participant pages."
    )
    text_direction = models.CharField(
        max_length=4,
        choices=[("auto", "From the text"), ("ltr", "Left to right"), ("rtl", "Right to left")],
        default="auto",
        help_text="How transcripts are laid out.",
    )

    clips_per_task = models.PositiveSmallIntegerField(default=20, validators=[MinValueValidator(1)])
    target_annotations = models.PositiveSmallIntegerField(default=10, validators=[MinValueValidator(1)])
    min_marked_words = models.PositiveSmallIntegerField(
        default=1,
        help_text="Fewest words a participant must mark in each clip; 0 lets them report a clip with no "
        "emphasis (a CAST listener study needs 0).",
    )
    max_marked_fraction = models.FloatField(
        default=0.30,
        null=True,
        blank=True,
        validators=[
            MinValueValidator(0.01, "Give a share above 0 (0.3 is 30 %%), or leave it empty for no limit."),
            MaxValueValidator(1.0, "Give a share of at most 1 (every word), or leave it empty for no limit."),
        ],
        help_text="Most words of a clip that may be marked (1 or 2), as a share of its words: 0.3 is 30 %, "
        "never fewer than one word. Empty for no limit (a CAST listener study leaves it empty).",
    )
    adaptive_mode = models.CharField(
        "adaptive design",
        max_length=13,
        choices=Adaptive.choices,
        default=Adaptive.FIXED,
        help_text="Emphasis studies: how many listeners a clip gets. Exact stopping keeps every binary label "
        "of the full design but not the scalar label, which becomes the mean of fewer annotations (set a "
        "scalar standard-error bound to stop only when both are settled). Probabilistic stopping may change "
        "a few binary labels (at most about epsilon a word). The study's agreement figures then disclose the design.",
    )
    adaptive_epsilon = models.FloatField(
        "epsilon",
        default=0.02,
        validators=[MinValueValidator(0.0001), MaxValueValidator(0.5)],
        help_text="Probabilistic stopping: stop a clip when, for every word, the chance that the target's "
        "annotations would give another binary label is below this.",
    )
    adaptive_min_annotators = models.PositiveSmallIntegerField(
        "minimum annotators",
        default=3,
        validators=[MinValueValidator(1)],
        help_text="Probabilistic stopping: fewest annotations a clip gets before it may stop. Model "
        "allocation: what every clip gets before the model chooses (5 in the bench; the model is overconfident at 3).",
    )
    adaptive_max_per_clip = models.PositiveSmallIntegerField(
        "maximum per clip",
        default=20,
        validators=[MinValueValidator(1)],
        help_text="Reallocation and model allocation: most annotations a clip may get (the saved or the "
        "allocated budget goes to the contested clips, up to this).",
    )
    adaptive_scalar_se = models.FloatField(
        "scalar standard-error bound",
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0)],
        help_text="Stopping (exact, probabilistic, reallocation): stop a clip early only when, besides its "
        "binary labels, every word's scalar label (mean score 0, 0.5, 1) has a standard error at most this, "
        "e.g. 0.1. Empty: the binary labels alone decide.",
    )
    adaptive_prior = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text="Probabilistic stopping: the beta prior of words' marking rates fitted to this study's "
        "annotations (a, b, words, fitted_at).",
    )
    adaptive_predictor = models.CharField(
        "predictor of further marks",
        max_length=13,
        choices=Predictor.choices,
        default=Predictor.BETA_BINOMIAL,
        help_text="Probabilistic stopping and reallocation: how the marks of the listeners still to come are "
        "foreseen (model allocation always uses the ordinal model). The ordinal model is refitted to the "
        "study's annotations as tasks complete (in the background); until its first fit the beta-binomial "
        "stands in.",
    )
    adaptive_model = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text="Probabilistic stopping with the ordinal predictor, and model allocation: the model fitted "
        "to this study's annotations (prominence distribution, each participant's thresholds, annotations, fitted_at).",
    )
    design_check = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text="The study designer's check, from this study's pilot, of model allocation and the ordinal "
        "predictor against the fixed design (evaluation.stats.allocation_check): the settings it simulated, and "
        "for each design its verdict, figures and reason. Either may be chosen only where it beats the fixed design.",
    )
    time_limit_minutes = models.PositiveSmallIntegerField(default=60, validators=[MinValueValidator(1)])
    places = models.PositiveIntegerField(
        null=True, blank=True, help_text="Most tasks handed out (Prolific places); empty for no limit."
    )
    allow_repeat_tasks = models.BooleanField(default=False, help_text="May a participant take a second task?")
    reward = models.DecimalField(max_digits=8, decimal_places=2, default=0, validators=[MinValueValidator(0)])
    reward_currency = models.CharField(max_length=3, default="GBP")
    estimated_minutes = models.PositiveSmallIntegerField(default=15)

    instructions = models.TextField(blank=True, help_text="Markdown; shown before the task and on demand.")
    example_clip = models.ForeignKey(
        Clip,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="A worked example shown with the instructions.",
    )
    example_levels = models.JSONField(default=list, blank=True, help_text="Levels (0, 1, 2) of the example's words.")
    consent_text = models.TextField(blank=True, help_text="Markdown.")

    attention_checks_per_task = models.PositiveSmallIntegerField(default=1)
    sound_check = models.BooleanField(default=False, help_text="Count tones in a clip before the task.")
    sound_check_tries = models.PositiveSmallIntegerField(default=2, validators=[MinValueValidator(1)])
    # The headphone check (annotation/headphone_stimuli.py; researcher's guide, "Headphone check").
    # Off for a study made before it existed; study_create turns Huggins pitch on for new emphasis studies.
    headphone_check = models.CharField(
        max_length=10,
        choices=HeadphoneCheck.choices,
        default=HeadphoneCheck.NONE,
        help_text="A listening test that headphones pass and loudspeakers do not, after a page where the "
        "participant sets a comfortable volume (new emphasis studies: Huggins pitch). Milne et al. find Huggins "
        "pitch the more selective; both together let the fewest loudspeaker listeners through (about 7 %) and "
        "turn away more headphone users.",
    )
    headphone_check_trials = models.PositiveSmallIntegerField(
        "trials per test",
        default=6,
        validators=[MinValueValidator(1), MaxValueValidator(20)],
        help_text="Each trial plays three sounds; the participant picks the one that differs. Both papers: 6.",
    )
    huggins_pass_mark = models.PositiveSmallIntegerField(
        "Huggins pitch: correct to pass",
        default=6,
        validators=[MinValueValidator(1), MaxValueValidator(20)],
        help_text="Milne et al. 2021: 6 of 6, which passed 81 % of their headphone users and 20 % of their "
        "loudspeaker users (5 of 6: 85 % and 30 %).",
    )
    antiphase_pass_mark = models.PositiveSmallIntegerField(
        "antiphase: correct to pass",
        default=5,
        validators=[MinValueValidator(1), MaxValueValidator(20)],
        help_text="Woods et al. 2017: 5 of 6.",
    )
    headphone_check_tries = models.PositiveSmallIntegerField(
        "tries per test",
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(10)],
        help_text="Each try is a fresh set of trials. The published pass rates are for one try; every "
        "further try lets more loudspeaker listeners through.",
    )
    headphone_check_screens_out = models.BooleanField(
        "screen out who fails",
        default=True,
        help_text="Off: a participant who fails goes on to the task with the result recorded, e.g. to compare "
        "the agreement of those who pass and fail in the agreement report.",
    )
    required_coverage = models.FloatField(
        default=0.95,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Share of each clip that must actually be played.",
    )
    mismatch_threshold = models.PositiveSmallIntegerField(
        default=2,
        validators=[MinValueValidator(1)],
        help_text="Mismatch reports that take a clip out of assignment for review.",
    )

    completion_code = models.CharField(max_length=32, default=new_code)
    screen_out_code = models.CharField(max_length=32, default=new_code)

    review_min_attention = models.FloatField(default=1.0, help_text="Flag below this share of checks passed.")
    review_min_kappa = models.FloatField(default=0.1, help_text="Flag below this agreement with the others.")
    review_min_time_ratio = models.FloatField(
        default=1.0,
        validators=[MinValueValidator(0.0)],
        help_text="Flag a median time per clip below this multiple of the clip's duration "
        "(1.0: less time than it takes to play the clip once).",
    )

    created_at = models.DateTimeField(auto_now_add=True)
    target_reached_at = models.DateTimeField(
        null=True, blank=True, editable=False, help_text="When every clip first had its target (the webhook's event)."
    )

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.name

    @property
    def is_live(self) -> bool:
        return self.status == self.Status.LIVE

    @property
    def is_adaptive(self) -> bool:
        return self.adaptive_mode != self.Adaptive.FIXED

    @property
    def capabilities(self) -> study_kinds.Capabilities:
        return study_kinds.capabilities_of(self.kind)

    @property
    def headphone_tests(self) -> tuple[str, ...]:
        """The headphone check's tests in the order they are taken: Huggins pitch first, the more
        selective (Milne et al. 2021), so that a loudspeaker listener is turned away sooner."""
        return {
            self.HeadphoneCheck.NONE: (),
            self.HeadphoneCheck.HUGGINS: ("huggins",),
            self.HeadphoneCheck.ANTIPHASE: ("antiphase",),
            self.HeadphoneCheck.BOTH: ("huggins", "antiphase"),
        }[self.headphone_check]

    def headphone_pass_mark(self, test: str) -> int:
        return self.huggins_pass_mark if test == "huggins" else self.antiphase_pass_mark

    def headphone_try_passed(self, test: str, *, answered: int, correct: int) -> bool:
        """A try passes a test once all its trials are answered, at least the pass mark of them right."""
        return answered >= self.headphone_check_trials and correct >= self.headphone_pass_mark(test)

    def clean(self):
        super().clean()
        if self.example_clip_id and self.corpus_id and self.example_clip.corpus_id != self.corpus_id:
            raise ValidationError({"example_clip": other_corpus_message(self.example_clip, self)})
        for field, test in (("huggins_pass_mark", "Huggins pitch"), ("antiphase_pass_mark", "antiphase")):
            if getattr(self, field) > self.headphone_check_trials:
                raise ValidationError(
                    {
                        field: f"The {test} test has {self.headphone_check_trials} trials: at most that many can be right."
                    }
                )
        if self.is_adaptive and not self.capabilities.adaptive_designs:
            raise ValidationError({"adaptive_mode": "Adaptive designs are for word-level emphasis studies only."})
        if self.is_adaptive and self.adaptive_max_per_clip < self.target_annotations:
            raise ValidationError(
                {"adaptive_max_per_clip": "Give at least the target annotations (a clip is never held below it)."}
            )
        if self.adaptive_mode == self.Adaptive.ALLOCATE and self.adaptive_min_annotators > self.target_annotations:
            raise ValidationError(
                {"adaptive_min_annotators": "Model allocation gives every clip this many first: at most the target."}
            )
        # A study already on one of these designs keeps it (made before the check, or by a script):
        # only choosing it is held to the check.
        stored = Study.objects.filter(pk=self.pk).first() if self.pk else None
        problems = unchecked_design_problems(self, already=checked_designs_chosen(stored) if stored else ())
        if problems:
            raise ValidationError({problem.field: problem.reason for problem in problems})


# The choices that rest on the ordinal annotator model, which loses to the fixed design on crowds
# it does not assume: each is allowed only where the study's design check says it beats the fixed
# design (Study.design_check, written by evaluation.services.study_designs from the study's pilot).
# Per check: the field, what it names, and the settings the check must have simulated.
CHECKED_DESIGNS = {
    "allocate": ("adaptive_mode", "Model allocation", ("target_annotations", "adaptive_min_annotators",
                                                       "adaptive_max_per_clip")),
    "ordinal": ("adaptive_predictor", "The ordinal predictor", ("target_annotations", "adaptive_min_annotators",
                                                                "adaptive_epsilon")),
}  # fmt: skip


def checked_designs_chosen(study: Study) -> list[str]:
    """Which of CHECKED_DESIGNS the study's settings choose (the ordinal predictor counts only in the
    probabilistic modes, the only ones that use it)."""
    chosen = []
    if study.adaptive_mode == Study.Adaptive.ALLOCATE:
        chosen.append("allocate")
    probabilistic = (Study.Adaptive.PROBABILISTIC, Study.Adaptive.REALLOCATE)
    if study.adaptive_predictor == Study.Predictor.ORDINAL and study.adaptive_mode in probabilistic:
        chosen.append("ordinal")
    return chosen


def unchecked_design_problems(study: Study, *, already=()) -> list[Problem]:
    """Why the study may not choose the designs it chooses of CHECKED_DESIGNS (those `already`
    chosen aside): none where its design check, for its present settings, says each beats the
    fixed design."""
    problems = []
    for design in checked_designs_chosen(study):
        if design in already:
            continue
        field, name, settings = CHECKED_DESIGNS[design]
        reason = _design_check_refusal(study, design, name, settings)
        if reason:
            problems.append(Problem(reason=reason, where=f"study {study.slug or study.name}", field=field))
    return problems


def _design_check_refusal(study: Study, design: str, name: str, settings: tuple[str, ...]) -> str:
    check = study.design_check or {}
    verdict = check.get(design)
    if not verdict:
        return (
            f"{name} is offered only where it beats the fixed design for this study, and no design check says "
            "so: run the study designer on a pilot of this study (its first annotations, with the fixed design) "
            "first; its check of this design is stored on the study."
        )
    simulated = check.get("settings", {})
    changed = [setting for setting in settings if simulated.get(setting) != getattr(study, setting)]
    if changed:
        return (
            f"{name}: the study's design check simulated other settings ({', '.join(changed)}); run the study "
            "designer on the pilot again with these."
        )
    if not verdict.get("beats_fixed"):
        return f"{name} does not beat the fixed design for this study: {verdict.get('reason', '')}"
    return ""


def other_corpus_message(clip: Clip, study: Study) -> str:
    return (
        f"Clip {clip.external_id!r} is from corpus {clip.corpus.name!r}; "
        f"study {study.name!r} uses corpus {study.corpus.name!r}: choose one of its clips."
    )


def check_among_study_clips_message(clip: Clip, study: Study) -> str:
    return (
        f"Clip {clip.external_id!r} is one of the study's own clips: as an attention check it would never be "
        "handed out for annotation, yet it would count toward the target. Choose a clip of the corpus that the "
        "study does not annotate (create the study without it, e.g. leave it out of the clip list)."
    )


class PrerequisiteQuestion(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="prerequisites")
    position = models.PositiveSmallIntegerField(default=0)
    text = models.CharField(max_length=300)
    choices = models.JSONField(default=list, help_text='The answers offered, e.g. ["Yes", "No"].')
    accepted = models.JSONField(default=list, help_text="The answers that qualify.")

    class Meta:
        ordering = ["study", "position", "pk"]

    def __str__(self) -> str:
        return self.text


class StudyItem(models.Model):
    """A clip in a study, with the counts that drive assignment."""

    class Review(models.TextChoices):
        ACTIVE = "active"
        NEEDS_REVIEW = "needs_review", "Needs review (mismatch reports)"
        CLEARED = "cleared", "Cleared after review"
        EXCLUDED = "excluded"

    # The state mismatch reports move a clip from, and the one they move it to: the submission's
    # statement (annotation.sql.submission_rows) makes the move, annotation.services.study_item_review
    # tells the whole review. Only an active clip is sent to review: a cleared one has been heard by a
    # reviewer, so later reports leave it in assignment.
    REPORTED_FROM, REPORTED_TO = Review.ACTIVE, Review.NEEDS_REVIEW

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    clip = models.ForeignKey(Clip, on_delete=models.PROTECT, related_name="study_items")
    form_item = models.OneToOneField(
        "annotation.ListeningFormItem", on_delete=models.CASCADE, null=True, blank=True, related_name="study_item"
    )
    completed_count = models.PositiveIntegerField(default=0)
    reserved_count = models.PositiveIntegerField(default=0, help_text="In open tasks, not yet submitted.")
    mismatch_count = models.PositiveIntegerField(default=0)
    review = models.CharField(max_length=16, choices=Review.choices, default=Review.ACTIVE)
    # Adaptive designs only (Study.adaptive_mode), updated in each submission's transaction so that a
    # claim reads a flag instead of recomputing the rule: per word, the marks (level 1 or 2) and the
    # heavy marks (level 2) so far; whether the clip needs no more listeners; what one more is worth.
    word_marks = models.JSONField(default=list, blank=True, editable=False)
    word_heavy = models.JSONField(default=list, blank=True, editable=False)
    settled = models.BooleanField(default=False, editable=False)
    priority = models.FloatField(default=0.0, editable=False)

    class Meta:
        ordering = ["study", "clip"]
        constraints = [
            # An emphasis study annotates each clip once; a form may ask several questions about one clip.
            models.UniqueConstraint(
                fields=["study", "clip"], condition=models.Q(form_item__isnull=True), name="study_item_unique_clip"
            ),
        ]
        indexes = [models.Index(fields=["study", "review"])]

    def __str__(self) -> str:
        return f"{self.clip} in {self.study}"

    @property
    def assignable(self) -> bool:
        return self.review in (self.Review.ACTIVE, self.Review.CLEARED)


class AttentionCheck(models.Model):
    """A clip with an expected answer, slipped into tasks. The answer never leaves the server."""

    class Kind(models.TextChoices):
        INSTRUCTED = "instructed", "Instructed (the audio says what to mark)"
        GOLD = "gold", "Gold (unanimous expert labels)"

    class Rule(models.TextChoices):
        AT_LEAST = "at_least", "At least the level named (a heavy mark passes where emphasized is asked)"
        EXACT = "exact", "Exactly the level named"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="attention_checks")
    clip = models.ForeignKey(Clip, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.INSTRUCTED)
    expected = models.JSONField(
        help_text='Required level per word index, e.g. {"3": 2}; words not listed may take any level.'
    )
    # A listener who hears a word as heavily emphasized where the check asks for "emphasized" heard
    # the emphasis: an exact match fails honest people (11 of 15 in issue 33's study), so new checks
    # ask for at least the level. "Must stay unmarked (0)" means unmarked under either rule.
    rule = models.CharField(
        max_length=8,
        choices=Rule.choices,
        default=Rule.AT_LEAST,
        help_text="How a word's mark is compared with the level it must take. Words that must stay unmarked "
        "(0) pass only unmarked under either rule.",
    )

    def __str__(self) -> str:
        return f"check {self.clip}"

    def clean(self):
        super().clean()
        # Only the study's own clips are played in its tasks: another corpus's clip would slip in
        # audio the study never chose (and its participants may not speak).
        if self.clip_id and self.study_id and self.clip.corpus_id != self.study.corpus_id:
            raise ValidationError({"clip": other_corpus_message(self.clip, self.study)})
        # A check's clip is never handed out as a normal clip of the same task (a participant would
        # hear it twice), and a task always holds the study's checks, so a clip that is both would
        # count toward the target without ever being annotated: the study would stall short of it.
        if self.clip_id and self.study_id and self.study.items.filter(clip_id=self.clip_id).exists():
            raise ValidationError({"clip": check_among_study_clips_message(self.clip, self.study)})

    def passed_by(self, levels: list[int]) -> bool:
        return all(
            0 <= int(index) < len(levels) and self._meets(levels[int(index)], level)
            for index, level in self.expected.items()
        )

    def _meets(self, given: int, level: int) -> bool:
        if self.rule == self.Rule.AT_LEAST and level > 0:
            return given >= level
        return given == level
