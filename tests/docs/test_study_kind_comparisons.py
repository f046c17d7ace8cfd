"""No code outside the declaration of the kinds of study (annotation/study_kinds.py) asks which kind
a study is: it asks the study's capabilities (docs/development.md, "Adding a kind of study"). A
comparison of the kind, in Python or a template, fails here with the line that makes it, so that a
third kind is not silently treated as one of the first two."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("annotation", "evaluation", "modelzoo", "prolific", "config", "templates")
DECLARATION = {"annotation/study_kinds.py"}
# Naming a kind is not asking one: the field's default, and the services that create a study of
# their one kind (an import of a crowd's emphasis study, a listening form's upload).
NAMES_A_KIND = {
    "annotation/models/study.py": re.compile(r"^\s*kind = models\.CharField\(.*default=Kind\.EMPHASIS\)$"),
    "annotation/services/crowd_study_import.py": re.compile(r"^\s*kind=Study\.Kind\.EMPHASIS,$"),
    "annotation/services/listening_forms.py": re.compile(r"^\s*kind=Study\.Kind\.LISTENING_FORM,$"),
}
KIND_NAMES = "emphasis|form"
ASKS_THE_KIND = [
    re.compile(r"\bKind\.(EMPHASIS|LISTENING_FORM)\b"),  # a comparison or a filter on a kind of study
    re.compile(r"\b(study|original|rules)\w*[\"']?\]?\)?\.kind\b"),  # a study's kind, read (Python or template)
    re.compile(r"\bstudy__kind\b(?!__in=kinds_with\()"),  # a query on a study's kind but by capability
    re.compile(rf"[\"']({KIND_NAMES})[\"']\s*(==|!=)|(==|!=)\s*[\"']({KIND_NAMES})[\"']"),  # a kind's value compared
    re.compile(rf"\bkind\s*=\s*[\"']({KIND_NAMES})[\"']"),  # a kind's value given to a query
]


def asks_the_kind(line: str) -> bool:
    return any(pattern.search(line) for pattern in ASKS_THE_KIND)


def scanned_files():
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in (".py", ".html") and "migrations" not in path.parts:
                yield path.relative_to(ROOT).as_posix(), path


def offending_lines() -> list[str]:
    found = []
    for name, path in scanned_files():
        if name in DECLARATION:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            allowed = NAMES_A_KIND.get(name)
            if asks_the_kind(line) and not (allowed and allowed.match(line)):
                found.append(f"{name}:{number}: {line.strip()}")
    return found


def test_no_code_outside_the_declaration_asks_a_studys_kind():
    assert offending_lines() == []


def test_the_scan_sees_the_comparisons_it_forbids():
    for line in (
        "    if study.kind == Study.Kind.EMPHASIS:",
        "    if study.kind != Study.Kind.LISTENING_FORM:",
        '        if needed == "study" and data["study"].kind != "form":',
        '{% if original.kind == "emphasis" and perms.evaluation.view_agreementreport %}',
        "    Study.objects.filter(kind=Study.Kind.EMPHASIS)",
        '    items.filter(study__kind="form")',
        '    Study.objects.filter(kind="emphasis")',
        "    unit = 'item' if task.study.kind == 'form' else 'clip'",
    ):
        assert asks_the_kind(line), line


def test_the_scan_lets_capabilities_through():
    for line in (
        "    if study.capabilities.answers_are_choices:",
        "{% if original.capabilities.answers_are_word_marks and perms.evaluation.view_agreementreport %}",
        '    Study.objects.filter(kind__in=kinds_with("answers_are_word_marks"))',
        '    items.filter(study__kind__in=kinds_with("answers_are_choices"))',
        "    if system.kind != System.Kind.DETECTOR:",
        '    "form": form,',
    ):
        assert not asks_the_kind(line), line


def test_the_files_that_name_a_kind_still_exist_and_name_it():
    for name, pattern in NAMES_A_KIND.items():
        assert any(pattern.match(line) for line in (ROOT / name).read_text().splitlines()), name


def test_the_checklist_for_a_new_kind_names_files_that_exist():
    text = (ROOT / "docs" / "development.md").read_text()
    section = text.split("### Adding a kind of study", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`((?:annotation|evaluation|modelzoo|templates|tests)/[\w/.]+)`", section))
    assert "annotation/study_kinds.py" in named
    assert [name for name in sorted(named) if not (ROOT / name).exists()] == []
