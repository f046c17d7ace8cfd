"""One type for "the platform will not do this, and here is why": every service's `*Refused`
subclasses `Refused`, so that the API answers each the same way (a 400 whose body is
annotation.shared.api.errors.refusal_body) and a caller that only needs the reason catches one type.

Pure: no Django, so that any app, and the pure packages (evaluation.stats), may import it.
"""

from dataclasses import asdict, dataclass

SHOWN_PROBLEMS = 20  # in a message and in an API answer; `problems` holds them all


@dataclass(frozen=True)
class Problem:
    """What is wrong with one record, and where: `where` always says it in words ("items.jsonl
    line 3", "data/train.parquet row 17"); `file` and `line` are set where the record is a line
    of one file; `item` is the clip or item the record is about ("" when it names none), `field`
    the field at fault ("" for the record as a whole)."""

    reason: str
    where: str = ""
    file: str | None = None
    line: int | None = None
    item: str = ""
    field: str = ""

    def as_dict(self) -> dict:
        # In reading order: where it is, what it is about, then why.
        order = ("file", "line", "where", "item", "field", "reason")
        values = asdict(self)
        return {name: values[name] for name in order}


class Refused(Exception):
    """A service refused what it was asked; the message says why, and `problems` (possibly none)
    the records at fault. Subclasses keep their own attributes; one whose problems are of
    another kind overrides `located`."""

    def __init__(self, *args, problems: list[Problem] | tuple[Problem, ...] = ()):
        super().__init__(*args)  # as the exception it also is (ValueError, OSError) takes them
        self.problems = list(problems)

    def located(self) -> list[Problem]:
        """The records at fault, each with where it is."""
        return list(self.problems)
