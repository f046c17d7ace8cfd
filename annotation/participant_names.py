"""How a participant is named, written once for every page and artefact of a study.

Two names, no more:

- the annotator id, `a-<16 hex digits>`: opaque and stable. Every artefact of a study names an
  annotator by it: the agreement report (page, JSON/CSV downloads, command, API), the review
  page, label sets, dataset exports and the API's annotations. It is a hash of the study's slug
  and the participant's annotator key (the Prolific id, or `local-<pk>` for a participant who came
  without one), so the same person has the same id in every report and set of the study, a
  database dump and restore keeps it, and the Prolific id cannot be read back from it.
- the display name: the Prolific id, or `local #<pk>` for a participant without one. Only users
  who hold `annotation.change_participant` (PARTICIPANT_PERMISSION: the permission the review page
  and raw exports with Prolific ids already ask for) see it: the participant list, the review page,
  the report page's annotator table, raw exports made with Prolific ids.
"""

import hashlib

PARTICIPANT_PERMISSION = "annotation.change_participant"
# Shown in place of what holds Prolific ids (a call's body, a webhook's payload) to everyone else.
PROLIFIC_IDS_HIDDEN = "hidden: needs the participant permission"


def annotator_key(participant_pk: int, prolific_pid: str) -> str:
    """What the annotator id is a hash of: the Prolific id, or "local-<pk>" without one."""
    return prolific_pid or f"local-{participant_pk}"


def opaque_annotator_id(study_slug: str, annotator_key: str) -> str:
    """A stable id for an annotator: the same person gets the same id in every artefact of the
    study, and the Prolific id cannot be read back from it."""
    digest = hashlib.sha256(f"{study_slug}\x1f{annotator_key}".encode()).hexdigest()
    return f"a-{digest[:16]}"


def participant_annotator_id(*, study_slug: str, participant_pk: int, prolific_pid: str) -> str:
    return opaque_annotator_id(study_slug, annotator_key(participant_pk, prolific_pid))


def participant_display_name(*, participant_pk: int, prolific_pid: str) -> str:
    """The name a reviewer knows the participant by: the Prolific id, or `local #<pk>`."""
    return prolific_pid or f"local #{participant_pk}"


def sees_prolific_ids(user) -> bool:
    """Whether `user` may see display names (Prolific ids) beside annotator ids."""
    return user is not None and user.has_perm(PARTICIPANT_PERMISSION)


def study_display_names(*, study) -> dict[str, str]:
    """Annotator id -> display name, for every participant of the study (one query)."""
    from annotation.models import Participant  # the module stays importable without the app registry

    rows = Participant.objects.filter(study=study).values_list("pk", "prolific_pid")
    return {
        participant_annotator_id(study_slug=study.slug, participant_pk=pk, prolific_pid=pid): (
            participant_display_name(participant_pk=pk, prolific_pid=pid)
        )
        for pk, pid in rows
    }
