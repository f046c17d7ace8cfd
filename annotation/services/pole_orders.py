"""Stance pole orders: every stance item is presented in both orders, balanced per item.

StanceBench asks each instance under both pole orders ("PN": the positive pole
first, "NP": the negative first), so that the report can tell a stance from a
preference for the first or second answer. When a task is created, each stance
item gets the order it has been given fewer times so far. An order counts while
its presentation may still be answered or has been: in an open task, or
submitted; a presentation released by an expired task (the participant gave up,
the clip went back to the pool) does not, so its order is given again. With
4 listeners per item that makes 2 and 2; with an odd number, one more of one.

Where an item's two orders are tied, the participant's own count decides: the
order they have seen less often (in this and their earlier tasks of the study),
so each participant's stance items are balanced too where the items allow it;
the seeded task random breaks a tie of both.

Concurrent claims: assignment locks the study items it reserves (SELECT ... FOR
UPDATE) until its transaction commits, so a claimer that reserves an item
counts, after taking the lock, every presentation committed before it; a
concurrent claim of the same item waits (or skips it) until then. A form's
attention-check items are not locked (everyone is shown them): their orders are
balanced as well, but two claims at once may give the same order.
"""

import random
from collections import Counter

from django.db.models import Count
from django.db.models.fields.json import KT

from annotation.models import ListeningFormItem, Participant, TaskItem

ORDERS = ("PN", "NP")


def pole_orders_choose(*, given: dict[int, Counter], participant: Counter, rng: random.Random) -> dict[int, str]:
    """The order of each item: the one `given[item]` holds fewer of, else the one the
    participant holds fewer of (counted on as orders are chosen), else a random one.
    Items with an order already decided are placed first, so the tied ones can even
    out the participant's count. Pure: `given` and `participant` are left as they are."""
    seen, chosen = Counter(participant), {}
    decided = [item for item, counts in given.items() if counts["PN"] != counts["NP"]]
    tied = [item for item, counts in given.items() if counts["PN"] == counts["NP"]]
    for item in decided + tied:
        if item in decided:
            chosen[item] = _fewer(given[item])
        else:
            chosen[item] = _fewer(seen) if seen["PN"] != seen["NP"] else rng.choice(ORDERS)
        seen[chosen[item]] += 1
    return chosen


def _fewer(counts: Counter) -> str:
    return "PN" if counts["PN"] < counts["NP"] else "NP"


def pole_orders_for(*, participant: Participant, study_item_ids: list[int], rng: random.Random) -> dict[int, str]:
    """{study item pk: pole order} for the given stance items (in task order). Call it
    after the items are locked (assignment's _reserve_items) and before the new
    task's items are written."""
    if not study_item_ids:
        return {}
    given: dict[int, Counter] = {pk: Counter() for pk in study_item_ids}
    counted = TaskItem.objects.filter(study_item_id__in=study_item_ids)
    for study_item_id, order, n in _orders_counted(counted, "study_item_id"):
        given[study_item_id][order] += n
    own = TaskItem.objects.filter(
        task__participant=participant, study_item__form_item__item_type=ListeningFormItem.Type.STANCE
    )
    mine = Counter({order: n for _, order, n in _orders_counted(own, "task__participant_id")})
    return pole_orders_choose(given=given, participant=mine, rng=rng)


def _orders_counted(task_items, key: str) -> list[tuple]:
    """(key, pole order, how many) over presentations that still count: not released."""
    rows = (
        task_items.exclude(status=TaskItem.Status.RELEASED)
        .annotate(pole_order=KT("presentation__pole_order"))
        .values(key, "pole_order")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return [(row[key], row["pole_order"], row["n"]) for row in rows if row["pole_order"] in ORDERS]
