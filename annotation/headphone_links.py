"""Short-lived signed links to the headphone check's sounds, as clips have (annotation.audio_links).

A link names a participant, a test, a try, a trial and an interval (0, 1 or 2), never which
interval is the target: the token's payload can be read by whoever holds it (it is signed, not
encrypted), and it holds nothing an answer could be read from. The three links of a trial differ
only in the interval's digit, so they have the same length too.
"""

from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.urls import reverse

_SALT = "annotation.headphone-audio-link"


@dataclass(frozen=True)
class StimulusGrant:
    participant_id: int
    test: str
    attempt: int
    trial: int
    interval: int


def stimulus_url(grant: StimulusGrant) -> str:
    payload = [grant.participant_id, grant.test, grant.attempt, grant.trial, grant.interval]
    return reverse("annotation:headphone_audio", kwargs={"token": signing.dumps(payload, salt=_SALT)})


def granted_stimulus(token: str) -> StimulusGrant:
    """What a token grants, or signing.BadSignature if forged, malformed or expired."""
    payload = signing.loads(token, salt=_SALT, max_age=settings.AUDIO_URL_TTL_SECONDS)
    if not (isinstance(payload, list) and len(payload) == 5):
        raise signing.BadSignature("malformed headphone audio token")
    participant_id, test, attempt, trial, interval = payload
    if not (isinstance(test, str) and all(isinstance(n, int) for n in (participant_id, attempt, trial, interval))):
        raise signing.BadSignature("malformed headphone audio token")
    return StimulusGrant(participant_id, test, attempt, trial, interval)
