"""Every rule the fake enforces, in one place, each with the words of Prolific's published
documentation it comes from (QUOTE) and where they are (SOURCE).

Where the fake is stricter than a quote says outright, NOTE says so and why: a contract fake
that accepts what Prolific might refuse would let a wrong client pass its tests.
"""

from dataclasses import dataclass
from decimal import Decimal


class RuleBroken(Exception):
    """The request breaks a rule: answered as Prolific answers errors."""

    def __init__(self, rule: "Rule", detail, status: int | None = None):
        super().__init__(f"{rule.name}: {detail}")
        self.rule = rule
        self.detail = detail
        self.status = status or rule.status


@dataclass(frozen=True)
class Rule:
    name: str
    status: int
    source: str
    quote: str
    note: str = ""

    def broken(self, detail, status: int | None = None) -> RuleBroken:
        return RuleBroken(self, detail, status)


API_REFERENCE = "https://docs.prolific.com/api-reference"
STUDY_OBJECT = "https://docs.prolific.com/api-reference/studies/the-study-object"
CREATE_STUDY = "https://docs.prolific.com/api-reference/studies/create-study"

AUTH_HEADER = Rule(
    "auth header required",
    401,
    f"{API_REFERENCE} (Authentication)",
    "The Prolific API uses API token to authenticate requests. [...] In your requests add `Authorization` "
    "header with the value `Token <your token>`.",
)

UNKNOWN_FIELDS = Rule(
    "unknown fields refused",
    400,
    f"{CREATE_STUDY}; https://docs.prolific.com/api-reference/eligibility-requirements",
    "This endpoint expects an object. [its properties are listed] — Eligibility requirements: Deprecated - please "
    "use Filters instead.",
    "Stricter than the quote: a field not in the documented object (a typo, or a retired field such as "
    "completion_code, completion_option or eligibility_requirements) is refused with 400, so that a client "
    "sending the retired study model fails here instead of silently losing its screeners on Prolific.",
)

STATUS_NAMES = Rule(
    "status names",
    400,
    f"{STUDY_OBJECT} (status)",
    "UNPUBLISHED - When a study is created, it is in a draft format. PUBLISHING - Study publish has been triggered "
    "and is being processed. ACTIVE - Study is published to participants. SCHEDULED [...] PAUSED - Study is paused, "
    "participants are not shown the study and can not make submissions. AWAITING REVIEW - All participants "
    "submissions are completed and not all have been reviewed yet. COMPLETED - You have approved all participant "
    "submissions required for your study.",
    "The fake publishes straight to ACTIVE (PUBLISHING is momentary), and STOP moves a study to AWAITING REVIEW "
    "(mephisto.ai, 'Prolific API oddities': stopped studies 'transition to AWAITING_REVIEW status').",
)
STUDY_STATUSES = ("UNPUBLISHED", "PUBLISHING", "SCHEDULED", "ACTIVE", "PAUSED", "AWAITING REVIEW", "COMPLETED")

TRANSITIONS = Rule(
    "study transitions",
    400,
    f"{API_REFERENCE}/studies/transition-study (actions PUBLISH, PAUSE, START, STOP)",
    "Publishing a study is a two step process, first create a draft study then publish it.",
    "Which action applies in which status follows the status list above: PUBLISH an UNPUBLISHED study, PAUSE an "
    "ACTIVE one, START a PAUSED one, STOP an ACTIVE or PAUSED one.",
)
ALLOWED_TRANSITIONS = {
    "PUBLISH": ({"UNPUBLISHED"}, "ACTIVE"),
    "PAUSE": ({"ACTIVE"}, "PAUSED"),
    "START": ({"PAUSED"}, "ACTIVE"),
    "STOP": ({"ACTIVE", "PAUSED"}, "AWAITING REVIEW"),
}

PLACES_ONLY_INCREASE = Rule(
    "places only increase",
    400,
    "https://researcher-help.prolific.com/en/article/a9dd41; mephisto.ai 'Prolific API oddities'",
    "It is possible to increase places on most studies after they have been published. — Prolific only allows "
    "increasing (but not decreasing) total_available_places",
)

IMMUTABLE_AFTER_PUBLISH = Rule(
    "study fields immutable after publishing",
    400,
    "https://researcher-help.prolific.com/en/article/a9dd41; mephisto.ai 'Prolific API oddities'",
    "You will not be able to change the following details on Prolific once your study is published [...] It is "
    "not possible to reduce the pay reward offered to participants after a study has been published — After "
    "Study has been published, Prolific only allows updating internal_name and total_available_places (all other "
    "fields are read-only, including Allow List and Block List).",
)
MUTABLE_AFTER_PUBLISH = {"internal_name", "total_available_places"}

COMPLETION_CODES = Rule(
    "completion codes",
    400,
    f"{API_REFERENCE}/studies/get-study (completion_codes); https://prolific.notion.site New Custom Screening",
    "Specify at least one completion code for your study. A participant will enter one of these codes when they "
    "complete your study. Each code must be unique within a study. You can specify as many actions as you like per "
    "code. However, some actions can't be used together (e.g. AutomaticallyApprove and ManuallyReview). — The "
    "completion path for custom screening studies requires two additional fields: fixed_screen_out_reward [...] "
    "slots [...] The completion path's action is now FIXED_SCREEN_OUT_PAYMENT.",
)
CODE_TYPES = (
    "COMPLETED",
    "FAILED_ATTENTION_CHECK",
    "FOLLOW_UP_STUDY",
    "GIVE_BONUS",
    "INCOMPATIBLE_DEVICE",
    "NO_CONSENT",
    "OTHER",
    "FIXED_SCREENOUT",
)
CODE_ACTIONS = {
    "AUTOMATICALLY_APPROVE": set(),
    "MANUALLY_REVIEW": set(),
    "REQUEST_RETURN": {"return_reason"},
    "ADD_TO_PARTICIPANT_GROUP": {"participant_group"},
    "REMOVE_FROM_PARTICIPANT_GROUP": {"participant_group"},
    "FIXED_SCREEN_OUT_PAYMENT": {"fixed_screen_out_reward", "slots"},
}
EXCLUSIVE_ACTIONS = {"AUTOMATICALLY_APPROVE", "MANUALLY_REVIEW"}

EXTERNAL_URL = Rule(
    "external study url",
    400,
    f"{STUDY_OBJECT} (external_study_url)",
    "While this field is nullable, you must provide one of access_details or external_study_url. [...] You can add "
    "query parameters with the following placeholders. {{%PROLIFIC_PID%}} -> Participant Id {{%STUDY_ID%}} -> This "
    "study Id {{%SESSION_ID%}} -> The session Id",
    "A URL that is not http(s), or names a placeholder other than those three, is refused.",
)
PLACEHOLDERS = ("{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}")

REWARD_IN_CENTS = Rule(
    "reward in cents",
    400,
    f"{STUDY_OBJECT} (reward)",
    "The reward is the total reward you pay a participant in cents (according to the currency of your account) "
    "when you approve a completed submission.",
    "A reward that is not a positive whole number of cents is refused.",
)

FILTERS = Rule(
    "filters",
    400,
    "https://docs.prolific.com/documentation/core-concepts/finding-the-right-participants",
    "Get the list of pre-screeners: GET https://api.prolific.com/api/v1/filters/ [...] There are 2 types of "
    "pre-screeners: select: select from one of more options from a list of pre-defined choices e.g., first "
    "language; range: specify an upper and/or a lower bound e.g., age",
    "A filter_id not in the list, a select filter without selected_values from its choices, or a range filter "
    "without selected_range {lower, upper} within its bounds is refused.",
)

PARTICIPANT_GROUPS = Rule(
    "participant groups",
    400,
    f"{API_REFERENCE}/participant-groups/create-participant-group; .../add-to-participant-group",
    "The id of the workspace to create the participant group in. Either a workspace or organisation ID must be "
    "specified. — Append participants to a participant group if they are not already members. If a participant "
    "is already a member of the group, they will be ignored.",
)

REJECTION_MESSAGE = Rule(
    "rejection message of at least 100 characters with a category",
    400,
    f"{API_REFERENCE}/submissions/transition-submission (REJECT: message, rejection_category)",
    "A REJECT transition carries a `message` to the participant and a `rejection_category` from Prolific's list.",
    "Not quoted verbatim in this session: the 100-character minimum is the one prolific.client already "
    "enforced (MIN_REJECTION_MESSAGE), from the same page.",
)

PAY_TWICE_PAYS_TWICE = Rule(
    "pay called twice pays twice",
    200,
    "https://researcher-help.prolific.co/hc/en-gb/articles/360009222573-Bonus-payments",
    "Please note, this may take a moment to update. Do not attempt to pay the bonus payment a second time unless "
    "you receive a message to say the payments have failed. [...] Commission is still charged on this type of "
    "participant payment.",
    "So the fake pays every pay call it gets: a second call pays again. Our side must never make it.",
)

# --- submissions, bonuses, webhooks (issue 22: tests/prolific_fake/submissions.py, bonuses.py, webhooks.py) ---

SUBMISSION_STATUSES = Rule(
    "submission status names",
    400,
    f"{API_REFERENCE}/submissions/list-submissions; {API_REFERENCE}/webhooks/receiving",
    "submission.status.change: resource_id - The unique identifier of the submission resource. [...] "
    "participant_id [...] status - The new status of the submission.",
    "The names are Prolific's submission statuses: RESERVED, ACTIVE, AWAITING REVIEW, APPROVED, PARTIALLY "
    "APPROVED, REJECTED, RETURNED, TIMED-OUT, SCREENED-OUT, UNKNOWN. A listed submission carries "
    "`bonus_payments` (the cents of each bonus paid on it), which is what reconciling a bonus reads.",
)
SUBMISSION_STATUS_NAMES = (
    "RESERVED", "ACTIVE", "AWAITING REVIEW", "APPROVED", "PARTIALLY APPROVED", "REJECTED", "RETURNED",
    "TIMED-OUT", "SCREENED-OUT", "UNKNOWN",
)  # fmt: skip

BONUS_SETUP = Rule(
    "bonus set-up from CSV lines of people who took part",
    400,
    f"{API_REFERENCE}/bonuses/create-bonus-payments",
    "The csv_bonuses field needs to be structured in the format of either: <participant_id>,<amount>\\n. "
    "<submission_id>,<amount>\\n. [...] The amount should be a decimal value, e.g. 1.50 for £1.50. [...] "
    "Setting up a bonus payment does not actually pay them [...] The submission and participant IDs need to have "
    'taken part in the study in order for this call to be successful. If not, you will get a "400" HTTP '
    "response back, which explains which IDs are incorrect.",
    "The answer has id, study, amount, fees, vat and total_amount (the page's example: amount 850, fees 283.34, "
    "total 1133.34, a fee of a third: BONUS_FEE_RATE).",
)
BONUS_FEE_RATE = Decimal(1) / Decimal(3)

PAY_NOT_IDEMPOTENT = Rule(
    "pay is not idempotent",
    200,
    f"{API_REFERENCE}/bonuses/pay-bonus-payments",
    "Bonus payments are made asynchronously. [...] This endpoint is **not idempotent**. Sending multiple requests "
    "with the same bulk bonus payment ID will result in participants being paid multiple times. Ensure you send "
    "this request only once per bulk payment.",
    "With PAY_TWICE_PAYS_TWICE: every call pays every line again. The fake pays at once (adds to each submission's "
    "bonus_payments) rather than minutes later.",
)

HOOK_SECRET = Rule(
    "one webhook secret per workspace",
    400,
    f"{API_REFERENCE}/webhooks/subscribing",
    "Make a POST request to /api/v1/hooks/secrets/ with the payload below. This will create a new secret for your "
    "workspace and be returned in the response body. [...] you can only have one active secret per workspace at a "
    "time.",
)

HOOK_SUBSCRIPTION = Rule(
    "webhook subscriptions need a secret and an https target",
    400,
    f"{API_REFERENCE}/webhooks/create-subscription",
    "Before creating a subscription, you must ensure that you have created a secret for your workspace. [...] "
    "<target_url> must be use https:// and be publicly accessible i.e. not https://localhost.",
    "A test may set state['allow_http_targets'] to call the test server's http://127.0.0.1, standing in for a "
    "public https address in front of it.",
)

HOOK_CONFIRM = Rule(
    "a subscription is confirmed with its X-Hook-Secret",
    400,
    f"{API_REFERENCE}/webhooks/confirm-subscription",
    "secret: The secret that was generated when the subscription was created and returned as the `X-Hook-Secret` "
    "header.",
    "Only confirmed subscriptions are sent events.",
)

WEBHOOK_SIGNATURE = Rule(
    "webhooks are signed",
    200,
    f"{API_REFERENCE}/webhooks/verifying; {API_REFERENCE}/webhooks/idempotency-and-the-x-event-id-header",
    "Hook requests will contain two headers, X-Prolific-Request-Signature and X-Prolific-Request-Timestamp. [...] "
    "sign the request body and timestamp with your secret key using SHA256 and then base64 encode the resulting "
    "digest. — X-Event-ID [...] will remain the same across retries.",
)

ALL = [
    AUTH_HEADER,
    UNKNOWN_FIELDS,
    STATUS_NAMES,
    TRANSITIONS,
    PLACES_ONLY_INCREASE,
    IMMUTABLE_AFTER_PUBLISH,
    COMPLETION_CODES,
    EXTERNAL_URL,
    REWARD_IN_CENTS,
    FILTERS,
    PARTICIPANT_GROUPS,
    REJECTION_MESSAGE,
    PAY_TWICE_PAYS_TWICE,
    SUBMISSION_STATUSES,
    BONUS_SETUP,
    PAY_NOT_IDEMPOTENT,
    HOOK_SECRET,
    HOOK_SUBSCRIPTION,
    HOOK_CONFIRM,
    WEBHOOK_SIGNATURE,
]
