from dataclasses import asdict, dataclass


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


class SourceRefused(Exception):
    """The folder or archive as a whole cannot be imported (unsafe or malformed)."""


SHOWN_PROBLEMS = 20  # in the message; `problems` holds them all


class ImportRefused(Exception):
    """Some rows are bad and --skip-invalid was not given: nothing was written."""

    def __init__(self, manifest_name: str, problems: list[RowProblem]):
        self.manifest_name = manifest_name
        self.problems = problems
        lines = [f"{manifest_name}: {len(problems)} bad row(s), nothing was imported:"]
        lines += [f"  {problem}" for problem in problems[:SHOWN_PROBLEMS]]
        if len(problems) > SHOWN_PROBLEMS:
            lines.append(f"  ... and {len(problems) - SHOWN_PROBLEMS} more problem(s)")
        super().__init__("\n".join(lines))
