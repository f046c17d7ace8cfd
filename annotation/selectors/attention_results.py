"""How the study's attention checks went: answers passed, and participants who passed every one.

Every check answered counts, rejected participants' included: the rate says how the check itself
behaves (a rule that fails honest listeners shows as a low rate), not who is kept.
"""

from django.db.models import Count, Q

from annotation.models import Annotation, Study


def attention_results(*, study: Study) -> dict:
    """answers, passed (check answers and those passed), people, people_passed (participants who
    answered a check, and those who passed every one)."""
    checks = Annotation.objects.filter(participant__study=study, attention_passed__isnull=False)
    per_person = checks.values("participant_id").annotate(
        answered=Count("pk"), failed=Count("pk", filter=Q(attention_passed=False))
    )
    people = list(per_person.values_list("answered", "failed"))
    return {
        "answers": sum(answered for answered, _ in people),
        "passed": sum(answered - failed for answered, failed in people),
        "people": len(people),
        "people_passed": sum(1 for _, failed in people if failed == 0),
    }


def attention_pass_text(*, study: Study) -> str:
    results = attention_results(study=study)
    if not results["answers"]:
        return "No attention check answered yet."
    share = results["passed"] / results["answers"]
    return (
        f"{results['passed']} of {results['answers']} check answers passed ({share:.0%}); "
        f"{results['people_passed']} of {results['people']} participants passed every check."
    )
