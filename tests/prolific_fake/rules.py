"""Every rule the fake enforces, in one place, one rule per documented constraint, each with the words
of Prolific's published documentation it comes from (QUOTE) and the page they are on (SOURCE, also
named in the comment above each rule). The fake is written from these pages and from Prolific's own
command-line client (github.com/prolific-oss/cli, read for the shapes it sends and expects), never
from our client: a fake copied from the client would share its misreadings.

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

# Documented at: https://docs.prolific.com/api-reference (Authentication)
AUTH_HEADER = Rule(
    "auth header required",
    401,
    f"{API_REFERENCE} (Authentication)",
    "The Prolific API uses API token to authenticate requests. [...] In your requests add `Authorization` "
    "header with the value `Token <your token>`.",
)

# --- every endpoint -------------------------------------------------------------------------------

# Documented at: RFC 9110, section 15.5.6 (405 Method Not Allowed); each endpoint's page names its one method.
WRONG_METHOD = Rule(
    "method not allowed",
    405,
    "https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6; each page of " + API_REFERENCE + " (one method each)",
    "The 405 (Method Not Allowed) status code indicates that the method received in the request-line is known by "
    "the origin server but not supported by the target resource. The origin server MUST generate an Allow header "
    "field in a 405 response containing a list of the target resource's currently supported methods.",
    "A path the API serves, asked with another method, is answered 405 with Allow, not 404: a client that sends "
    "POST where Prolific documents PATCH learns it from the status.",
)

# Documented at: https://docs.prolific.com/api-reference/studies/get-studies (and each endpoint's "Query parameters")
QUERY_PARAMETERS = Rule(
    "query parameters as documented",
    400,
    f"{API_REFERENCE}/studies/get-studies (state); {API_REFERENCE}/studies/get-study-submissions (ordering); "
    "prolific-oss/cli client/client.go GetSubmissions (limit, offset)",
    "Query parameters: state enum Optional - Filter studies by status. [...] ordering string Optional - Field to "
    "sort results by. Prefix with - for descending order. Allowed values: started_at, completed_at, status, ip, "
    "time_taken, participant_id, study_code.",
    "Stricter than Prolific, which may ignore a parameter it does not know: a misspelt filter would silently list "
    "everything, so the fake refuses any query parameter the endpoint's page (or the official CLI) does not use, "
    "and checks the values of those it knows.",
)

# Documented at: https://docs.prolific.com/api-reference/studies/create-study (and each endpoint's "Request")
JSON_OBJECT = Rule(
    "the body is a JSON object",
    400,
    f"{CREATE_STUDY} (Request)",
    "This endpoint expects an object.",
)

# Documented at: https://docs.prolific.com/api-reference/submissions/get-submission (and each endpoint's "Errors")
NOT_FOUND = Rule("not found", 404, f"{API_REFERENCE}/submissions/get-submission (Errors)", "404 Not Found")

# Documented at: https://docs.prolific.com/api-reference/studies/create-study; https://docs.prolific.com/api-reference/eligibility-requirements
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

# Documented at: https://docs.prolific.com/api-reference/studies/the-study-object (status)
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

# Documented at: https://docs.prolific.com/api-reference/studies/transition-study (actions PUBLISH, PAUSE, START, STOP)
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

# Documented at: https://researcher-help.prolific.com/en/article/a9dd41; mephisto.ai 'Prolific API oddities'
PLACES_ONLY_INCREASE = Rule(
    "places only increase",
    400,
    "https://researcher-help.prolific.com/en/article/a9dd41; mephisto.ai 'Prolific API oddities'",
    "It is possible to increase places on most studies after they have been published. — Prolific only allows "
    "increasing (but not decreasing) total_available_places",
)

# Documented at: https://researcher-help.prolific.com/en/article/a9dd41; mephisto.ai 'Prolific API oddities'
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

# Documented at: https://docs.prolific.com/api-reference/studies/get-study (completion_codes); https://prolific.notion.site New Custom Screening
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

# Documented at: https://docs.prolific.com/api-reference/studies/the-study-object (external_study_url)
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

# Documented at: https://docs.prolific.com/api-reference/studies/the-study-object (reward)
REWARD_IN_CENTS = Rule(
    "reward in cents",
    400,
    f"{STUDY_OBJECT} (reward)",
    "The reward is the total reward you pay a participant in cents (according to the currency of your account) "
    "when you approve a completed submission.",
    "A reward that is not a positive whole number of cents is refused.",
)

# Documented at: https://docs.prolific.com/documentation/core-concepts/finding-the-right-participants
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

# Documented at: https://docs.prolific.com/api-reference/participant-groups/create-participant-group; .../add-to-participant-group
PARTICIPANT_GROUPS = Rule(
    "participant groups",
    400,
    f"{API_REFERENCE}/participant-groups/create-participant-group; .../add-to-participant-group",
    "The id of the workspace to create the participant group in. Either a workspace or organisation ID must be "
    "specified. — Append participants to a participant group if they are not already members. If a participant "
    "is already a member of the group, they will be ignored.",
)


# --- submissions ----------------------------------------------------------------------------------

SUBMISSIONS = f"{API_REFERENCE}/submissions"

# Documented at: https://docs.prolific.com/api-reference/submissions/submission-object
SUBMISSION_STATUSES = Rule(
    "submission status names",
    400,
    f"{SUBMISSIONS}/submission-object; {API_REFERENCE}/studies/count-study-submissions-by-status",
    "RESERVED [...] ACTIVE [...] TIMED-OUT [...] AWAITING REVIEW [...] APPROVED [...] RETURNED [...] REJECTED [...] "
    "SCREENED OUT: The participant has been screened out. The participant is paid a fixed reward defined in the "
    "fixed reward screen out completion code. — Count study submissions by status: ACTIVE, APPROVED, AWAITING "
    "REVIEW, REJECTED, RESERVED, RETURNED, TIMED-OUT, PARTIALLY APPROVED, SCREENED OUT",
    "SCREENED OUT is spelt with a space (TIMED-OUT with a hyphen), as the pages and prolific-oss/cli "
    "model/submission_counts.go spell them. The fake sends no other spelling, and its test helpers refuse one.",
)
SUBMISSION_STATUS_NAMES = (
    "RESERVED", "ACTIVE", "TIMED-OUT", "AWAITING REVIEW", "APPROVED", "PARTIALLY APPROVED", "RETURNED", "REJECTED",
    "SCREENED OUT",
)  # fmt: skip

# Documented at: https://docs.prolific.com/api-reference/submissions/get-submission (bonus_payments)
BONUS_PAYMENTS_IN_CENTS = Rule(
    "a submission's bonus payments in cents",
    200,
    f"{SUBMISSIONS}/get-submission (bonus_payments)",
    "bonus_payments list of doubles or null - Bonus payments that have been paid on the submission. Returned in "
    "pence / cents.",
    "Listed submissions carry the same field (prolific-oss/cli model/submission.go: BonusPayments). A bonus "
    "appears there only once Prolific has paid it (PAY_IS_ASYNCHRONOUS).",
)

# Documented at: https://docs.prolific.com/api-reference/submissions/transition-submission
SUBMISSION_TRANSITION = Rule(
    "a submission is approved or rejected once, from AWAITING REVIEW",
    400,
    f"{SUBMISSIONS}/transition-submission",
    "Transition a submission to APPROVED, REJECTED, PARTIALLY APPROVED, AWAITING REVIEW or SCREENED OUT. Once the "
    "status is changed, it can not be restored to its previous value. [...] Note this endpoint is idempotent, so if "
    "you make the same request twice, the second request will be ignored. — Submissions: Once a submission is "
    "completed, you can approve, reject or ask participants to return the submission.",
    "APPROVE and REJECT apply to a submission AWAITING REVIEW (completed); the same action again answers the "
    "submission unchanged; another action on a decided submission is refused. PARTIALLY APPROVED and SCREENED OUT "
    "need completion codes our studies do not use: refused.",
)
SUBMISSION_ACTIONS = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}

# Documented at: https://docs.prolific.com/api-reference/submissions/transition-submission (message, rejection_category)
REJECTION_MESSAGE = Rule(
    "a rejection has a message of at least 100 characters and a category",
    400,
    f"{SUBMISSIONS}/transition-submission (message, rejection_category)",
    "message string Optional - Required if action is 'REJECT'. Message sent to the participant explaining the "
    "reason for the rejection. It must be at least 100 chars long. rejection_category enum Optional - Required if "
    "action is 'REJECT', it sums as the category of the rejection.",
)
REJECTION_CATEGORIES = (
    "TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK", "LOW_EFFORT",
    "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER",
)  # fmt: skip
MIN_REJECTION_MESSAGE = 100

# Documented at: https://docs.prolific.com/api-reference/submissions/request-submission-return
REQUEST_RETURN = Rule(
    "a return request gives its reasons",
    400,
    f"{SUBMISSIONS}/request-submission-return",
    "The return reason must be provided in the request and can be any free text string. [...] "
    "request_return_reasons list of strings Required. Response: id, status, participant, return_requested "
    "(The date and time when a return request for the submission was made).",
    "The page does not say from which status; the fake asks it of a submission still open (ACTIVE or AWAITING "
    "REVIEW), since one already decided, returned or timed out has nothing to return.",
)

# Documented at: https://docs.prolific.com/api-reference/submissions/bulk-approve-submissions
BULK_APPROVE = Rule(
    "bulk approval: a study and its participants, or submissions",
    400,
    f"{SUBMISSIONS}/bulk-approve-submissions",
    "There are two variant payloads to this request. 1. You can supply a Study ID, and a list of participant IDs, "
    "or 2. You can provide a list of submission IDs [...] Response: Bulk approve in progress",
    "The fields are prolific-oss/cli client/payloads.go BulkApproveSubmissionsPayload's (study_id, "
    "participant_ids, submission_ids); one of the two variants, not both. Every named submission must be AWAITING "
    "REVIEW in that study.",
)

# --- bonuses --------------------------------------------------------------------------------------

BONUSES = f"{API_REFERENCE}/bonuses"

# Documented at: https://docs.prolific.com/api-reference/bonuses/create-bonus-payments
BONUS_SETUP = Rule(
    "bonus set-up from CSV lines of people who took part",
    400,
    f"{BONUSES}/create-bonus-payments",
    "The csv_bonuses field needs to be structured in the format of either: <participant_id>,<amount>\\n. "
    "<submission_id>,<amount>\\n. Note: The amount will be in the study currency. The amount should be a decimal "
    "value, e.g. 1.50 for £1.50. Warning: An amount of 30 will pay £/$30.00. [...] Setting up a bonus payment "
    "does not actually pay them [...] The submission and participant IDs need to have taken part in the study in "
    'order for this call to be successful. If not, you will get a "400" HTTP response back, which explains which '
    "IDs are incorrect.",
)

# Documented at: https://docs.prolific.com/api-reference/bonuses/create-bonus-payments (Response)
BONUS_AMOUNTS_IN_CENTS = Rule(
    "the set-up's amounts are answered in cents",
    201,
    f"{BONUSES}/create-bonus-payments (Response); prolific-oss/cli client/responses.go CreateBonusPaymentsResponse",
    "id string - Bonus ID. It is the ID to be used when paying the bonus. total_amount double - Total amount that "
    "will be deducted from your balance in cents. study string or null. amount double or null - The amount the "
    "participant will receive in cents. fees double or null [...] — CLI: Monetary fields are returned by the API "
    "as floats in minor currency units (e.g., 100.0 = £1.00).",
    "The CSV goes in as currency (1.50), the answer comes back in cents (150.0): the fake answers doubles in cents, "
    "with the fee at BONUS_FEE_RATE rounded up to a hundredth of a cent (the page's example: amount 850, fees "
    "283.34, total 1133.34).",
)
BONUS_FEE_RATE = Decimal(1) / Decimal(3)

# Documented at: https://docs.prolific.com/api-reference/bonuses/pay-bonus-payments
PAY_IS_ASYNCHRONOUS = Rule(
    "pay is accepted (202) and carried out later",
    202,
    f"{BONUSES}/pay-bonus-payments; prolific-oss/cli client/client.go PayBonusPayments (Status(http.StatusAccepted))",
    "Bonus payments are made asynchronously. The payment will be done in the following minutes and your balance "
    "will be updated accordingly.",
    "The fake answers 202 and pays when the payment is due (state['pay_settle_seconds'] after the call, 0 by "
    "default: never inside the call's own answer); `payment_fail(fake, bulk_id)` makes a payment that never "
    "arrives, as one Prolific fails after accepting it.",
)

# Documented at: https://docs.prolific.com/api-reference/bonuses/pay-bonus-payments (Warning)
PAY_NOT_IDEMPOTENT = Rule(
    "pay is not idempotent",
    202,
    f"{BONUSES}/pay-bonus-payments",
    "This endpoint is **not idempotent**. Sending multiple requests with the same bulk bonus payment ID will result "
    "in participants being paid multiple times. Ensure you send this request only once per bulk payment.",
    "With PAY_TWICE_PAYS_TWICE: every call pays every line again.",
)

# Documented at: https://researcher-help.prolific.co/hc/en-gb/articles/360009222573-Bonus-payments
PAY_TWICE_PAYS_TWICE = Rule(
    "pay called twice pays twice",
    202,
    "https://researcher-help.prolific.co/hc/en-gb/articles/360009222573-Bonus-payments",
    "Please note, this may take a moment to update. Do not attempt to pay the bonus payment a second time unless "
    "you receive a message to say the payments have failed. [...] Commission is still charged on this type of "
    "participant payment.",
    "So the fake pays every pay call it gets: a second call pays again. Our side must never make it.",
)

# --- webhooks -------------------------------------------------------------------------------------

WEBHOOKS = f"{API_REFERENCE}/webhooks"

# Documented at: https://docs.prolific.com/api-reference/webhooks/subscribing
HOOK_SECRET = Rule(
    "one webhook secret per workspace",
    400,
    f"{API_REFERENCE}/webhooks/subscribing",
    "Make a POST request to /api/v1/hooks/secrets/ with the payload below. This will create a new secret for your "
    "workspace and be returned in the response body. [...] you can only have one active secret per workspace at a "
    "time.",
)

# Documented at: https://docs.prolific.com/api-reference/webhooks/create-subscription
HOOK_SUBSCRIPTION = Rule(
    "webhook subscriptions need a secret and an https target",
    400,
    f"{API_REFERENCE}/webhooks/create-subscription",
    "Before creating a subscription, you must ensure that you have created a secret for your workspace. [...] "
    "<target_url> must be use https:// and be publicly accessible i.e. not https://localhost.",
    "A test may set state['allow_http_targets'] to call the test server's http://127.0.0.1, standing in for a "
    "public https address in front of it.",
)

# Documented at: https://docs.prolific.com/api-reference/webhooks/confirm-subscription
HOOK_CONFIRM = Rule(
    "a subscription is confirmed with its X-Hook-Secret",
    400,
    f"{API_REFERENCE}/webhooks/confirm-subscription",
    "secret: The secret that was generated when the subscription was created and returned as the `X-Hook-Secret` "
    "header.",
    "Only confirmed subscriptions are sent events.",
)

# Documented at: https://docs.prolific.com/api-reference/webhooks/receiving
WEBHOOK_PAYLOAD = Rule(
    "an event's body",
    200,
    f"{WEBHOOKS}/receiving",
    'submission.status.change: {"resource_id", "event_type": "submission.status.change", "participant_id", '
    '"status"} [...] study.status.change: {"resource_id", "event_type": "study.status.change", "metadata": {}, '
    '"status"}',
)

# Documented at: https://docs.prolific.com/api-reference/webhooks/verifying
WEBHOOK_SIGNATURE = Rule(
    "webhooks are signed",
    200,
    f"{WEBHOOKS}/verifying",
    "Hook requests will contain two headers, X-Prolific-Request-Signature and X-Prolific-Request-Timestamp. The "
    "former represents signature and the latter represents a UNIX timestamp of when the request was sent. [...] "
    "sign the request body and timestamp with your secret key using SHA256 and then base64 encode the resulting "
    "digest.",
    "Each attempt is a request of its own, signed when it is sent: a redelivery carries a new "
    "X-Prolific-Request-Timestamp and signature (`redeliver(..., resign=False)` sends the first attempt's bytes "
    "again, as a network replay would).",
)

# Documented at: https://docs.prolific.com/api-reference/webhooks/idempotency-and-the-x-event-id-header
WEBHOOK_EVENT_ID = Rule(
    "one X-Event-ID per event, the same on every redelivery",
    200,
    f"{WEBHOOKS}/idempotency-and-the-x-event-id-header",
    "Each X-Event-ID value will be globally unique for each event that occurs. Re-Delivery: Events are delivered at "
    "least once. We will redeliver events on failure due to network issues, timeouts and listener errors. The "
    "X-Event-ID will remain the same across retries. Idempotent Processing: [...] If you encounter the same "
    "X-Event-ID again, simply skip and acknowledge the duplicate event rather than processing it a second time.",
)

# Documented at: https://docs.prolific.com/api-reference/webhooks/handling-event-order-with-x-timestamp
WEBHOOK_ORDER = Rule(
    "X-Timestamp orders events",
    200,
    f"{WEBHOOKS}/handling-event-order-with-x-timestamp",
    "The X-Timestamp header is added to the request. It contains a UNIX timestamp indicating when the event was "
    "sent. You can use this timestamp to determine if you are processing an out-of-order update. [...] As a "
    "webhook system, we do not guarantee the order of events.",
    "The fake stamps an event once, when it first sends it, and keeps that X-Timestamp on its redeliveries (the "
    "page's use of it, ordering a late retry behind a newer event, needs that).",
)

# Documented at: https://docs.prolific.com/api-reference/webhooks/event-delivery-and-retry-logic
WEBHOOK_RETRIES = Rule(
    "what is not answered 2xx is delivered again",
    200,
    f"{WEBHOOKS}/event-delivery-and-retry-logic",
    "If a webhook delivery fails due to a connection issue or a non-2xx HTTP response, we will retry the request up "
    "to 11 additional times over a 24-hour period, using exponential backoff with jitter.",
    "The fake does not wait: a test calls `redeliver` for each retry it wants, up to WEBHOOK_MAX_ATTEMPTS in all.",
)
WEBHOOK_MAX_ATTEMPTS = 12

ALL = [
    AUTH_HEADER,
    WRONG_METHOD,
    QUERY_PARAMETERS,
    JSON_OBJECT,
    NOT_FOUND,
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
    SUBMISSION_STATUSES,
    BONUS_PAYMENTS_IN_CENTS,
    SUBMISSION_TRANSITION,
    REJECTION_MESSAGE,
    REQUEST_RETURN,
    BULK_APPROVE,
    BONUS_SETUP,
    BONUS_AMOUNTS_IN_CENTS,
    PAY_IS_ASYNCHRONOUS,
    PAY_NOT_IDEMPOTENT,
    PAY_TWICE_PAYS_TWICE,
    HOOK_SECRET,
    HOOK_SUBSCRIPTION,
    HOOK_CONFIRM,
    WEBHOOK_PAYLOAD,
    WEBHOOK_SIGNATURE,
    WEBHOOK_EVENT_ID,
    WEBHOOK_ORDER,
    WEBHOOK_RETRIES,
]
