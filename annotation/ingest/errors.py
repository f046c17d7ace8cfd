from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from annotation.refusals import SHOWN_PROBLEMS, Problem, Refused


@dataclass(frozen=True)
class RowProblem:
    """Why one manifest row cannot be imported."""

    line: int
    clip_id: str
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}"
        if self.clip_id:
            where += f" (clip {self.clip_id!r})"
        if self.field:
            where += f", {self.field}"
        return f"{where}: {self.reason}"

    def as_dict(self) -> dict:
        return asdict(self)

    def located(self, file: str) -> Problem:
        """The problem in the one shape the API answers (the manifest's `clip_id` is its `item`)."""
        where = f"{file} line {self.line}"
        return Problem(self.reason, where=where, file=file, line=self.line, item=self.clip_id, field=self.field)


class SourceRefused(Refused):
    """The folder or archive as a whole cannot be imported (unsafe or malformed)."""


class LocatableProblem(Protocol):
    """A reader's problem (RowProblem, DatasetProblem), which says where it is in a given file."""

    def located(self, file: str) -> Problem: ...


class ImportRefused(Refused):
    """Some rows are bad and --skip-invalid was not given: nothing was written. `problems` are the
    reader's (RowProblem, or annotation.ingest.dataset_clips.DatasetProblem), each able to say
    where it is in `manifest_name`."""

    problems: list[Any]  # the reader's own kind of problem, not Problem (see `located`)

    def __init__(self, manifest_name: str, problems: Sequence["LocatableProblem"]):
        lines = [f"{manifest_name}: {len(problems)} bad row(s), nothing was imported:"]
        lines += [f"  {problem}" for problem in problems[:SHOWN_PROBLEMS]]
        if len(problems) > SHOWN_PROBLEMS:
            lines.append(f"  ... and {len(problems) - SHOWN_PROBLEMS} more problem(s)")
        super().__init__("\n".join(lines))
        self.manifest_name = manifest_name
        self.problems = list(problems)  # the reader's own, as the admin and the commands list them

    def located(self) -> list[Problem]:
        return [problem.located(self.manifest_name) for problem in self.problems]
