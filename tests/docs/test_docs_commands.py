"""Every command the README and docs/ show is held to the code.

Each shell line of a ```sh block is read as a reader would type it, its placeholders
(PATH, NAME, SLUG, ...) filled in, its optional parts ([--flag VALUE]) included and each
choice of an alternation (jsonl|csv) tried, and then:

- `manage.py COMMAND ...`: the command's own parser accepts the line, and a test named in
  COMMAND_TESTS runs that command for real;
- `make TARGET`: the Makefile has the target (CI runs `make lint` and `make test`);
- `curl ... $API/path`: the path resolves under /api/v1/ to a view that answers the method;
- `bench/NAME.py ...`: the script's --help lists every option the line uses;
- `celery -A config worker ...`: Celery's worker accepts the options;
- `python -m pytest tests/...`: the test paths exist; a project tool (lint-imports) is run by a test.

A line that matches none of these fails, so a new kind of command gets a check of its own.
"""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, get_commands, load_command_class
from django.urls import Resolver404, resolve

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# The tests that run each documented management command for real (call_command or a
# subprocess), so that the docs' commands are exercised and not only parsed.
COMMAND_TESTS = {
    "import_corpus": "tests/annotation/test_import_corpus.py",
    "import_form_items": "tests/annotation/test_import_listening_form_items.py",
    "agreement_report": "tests/evaluation/test_command.py",
    "labelset_create": "tests/evaluation/test_label_set_commands.py",
    "labelset_finalize": "tests/evaluation/test_label_set_commands.py",
    "labelset_export": "tests/evaluation/test_labelset_export_command.py",
    "design_study": "tests/evaluation/test_study_design.py",
    "import_system_outputs": "tests/evaluation/suites/test_system_output_import.py",
    "import_cast_items": "tests/evaluation/suites/test_cast_import.py",
    "import_emphasis_dataset": "tests/evaluation/test_emphasis_dataset_imports.py",
    "requeue_stale_jobs": "tests/annotation/test_jobs.py",
    "demo_crowd": "tests/evaluation/test_demo_crowd.py",
    "demo_database_template": "tests/annotation/test_demo_database_template.py",
    "backbones_prepare": "tests/modelzoo/test_backbones_prepare.py",
    "collectstatic": "tests/browser/conftest.py",
    "drf_create_token": "tests/docs/test_docs_commands.py",
    "spectacular": "tests/api/test_schema_unchanged.py",
    "makemessages": "tests/i18n/test_translations_complete.py",
    "compilemessages": "tests/i18n/test_translations_complete.py",
}

# Sample values for the placeholders the docs write in capitals.
PLACEHOLDERS = {
    "PATH": "corpus.zip",
    "NAME": "demo-set",
    "SLUG": "demo",
    "STUDY_SLUG": "demo",
    "FILE": "report.csv",
    "N": "1",
    "V": "1",
    "USERNAME": "admin",
    "xx": "de",
}

# Tools of other projects that the docs name (their options are theirs to keep).
EXTERNAL_TOOLS = {".venv/bin/uv", ".venv/bin/ruff"}
# Tools whose run on the tree is itself a test.
TOOL_TESTS = {
    ".venv/bin/lint-imports": "tests/config/test_import_contracts.py",
    ".venv/bin/mypy": "tests/config/test_type_check.py",
    ".venv/bin/openapi-python-client": "tests/api/test_generated_client_pipeline.py",
}


def shell_lines():
    for doc in DOC_FILES:
        text = doc.read_text()
        for block in re.finditer(r"```(?:sh|bash)\n(.*?)```", text, re.S):
            first_line = text[: block.start()].count("\n") + 2
            for offset, command in whole_commands(block.group(1)):
                yield pytest.param(command, id=f"{doc.relative_to(ROOT)}:{first_line + offset}")


def whole_commands(block: str):
    """(line offset, command) for each command of a block: continuation lines joined, and
    lines joined while a quote is open (a JSON body written over several lines)."""
    pending, start = "", 0
    for offset, line in enumerate(block.split("\n")):
        line = line.split(" #", 1)[0].rstrip() if not pending else line.rstrip()
        if not pending:
            start = offset
            if not line.strip() or line.lstrip().startswith("#"):
                continue
        pending = f"{pending} {line.strip()}" if pending else line.strip()
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        try:
            shlex.split(pending)
        except ValueError:  # a quote still open
            continue
        yield start, pending.split(" # ", 1)[0].strip()
        pending = ""


def variants(command: str) -> list[list[str]]:
    """The line as argument lists: optional parts included, each side of [a | b], each
    alternative of a|b|c."""
    either = re.search(r"\[([^\[\]]*?) \| ([^\[\]]*?)\]", command)
    if either:
        before, after = command[: either.start()], command[either.end() :]
        return variants(before + either.group(1) + after) + variants(before + either.group(2) + after)
    command = re.sub(r"\[([^\[\]]*)\]", r"\1", command).replace(" ...", "")
    words = shlex.split(command)
    widest = max((len(w.split("|")) for w in words if "|" in w and not w.startswith(("'", '"'))), default=1)
    return [[_fill(word.split("|")[min(i, len(word.split("|")) - 1)]) for word in words] for i in range(widest)]


def _fill(word: str) -> str:
    return PLACEHOLDERS.get(word, word)


def without_environment(words: list[str]) -> list[str]:
    while words and re.fullmatch(r"[A-Z_]+=.*;?", words[0]):
        words = words[1:]
    return words


@pytest.mark.parametrize("command", list(shell_lines()))
def test_documented_command_matches_the_code(command):
    for words in variants(command):
        words = without_environment(words)
        if not words:  # a line of variable assignments only
            return
        if "manage.py" in words:
            check_management_command(words[words.index("manage.py") + 1 :])
        elif words[0] == "make":
            check_make_target(words[1])
        elif words[0] == "curl":
            check_api_call(words)
        elif any(w.startswith("bench/") for w in words):
            check_bench_script(words)
        elif words[:4] == ["celery", "-A", "config", "worker"]:
            check_celery_worker(words[4:])
        elif words[0] in EXTERNAL_TOOLS:
            continue
        elif words[0] in TOOL_TESTS:
            assert Path(words[0]).name in (ROOT / TOOL_TESTS[words[0]]).read_text()
        elif words[1:3] == ["-m", "pytest"]:
            check_pytest_paths(words[3:])
        else:
            pytest.fail(f"no check knows this documented command: {command!r}")


def check_management_command(words):
    name, args = words[0], words[1:]
    commands = get_commands()
    assert name in commands, f"the docs name a management command that does not exist: {name}"
    parser = load_command_class(commands[name], name).create_parser("manage.py", name)
    parser.allow_abbrev = False  # the docs must spell each option out as the command does
    try:
        parser.parse_args(args)
    except CommandError as error:
        pytest.fail(f"manage.py {name} refuses the documented arguments {args}: {error}")
    test_file = COMMAND_TESTS.get(name)
    assert test_file, f"no test is named for documented command {name} (COMMAND_TESTS)"
    assert name in (ROOT / test_file).read_text(), f"{test_file} does not run {name}"


def check_pytest_paths(arguments):
    for path in (a.split("::")[0] for a in arguments if a.startswith("tests/")):
        assert (ROOT / path).exists(), f"the docs run pytest on {path}, which does not exist"


def check_make_target(target):
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(rf"^{re.escape(target)}:", makefile, re.M), f"the Makefile has no target {target!r}"


def check_api_call(words):
    url = next(w for w in words if w.startswith("$API"))
    path = "/api/v1" + url.removeprefix("$API").split("?", 1)[0]
    method = words[words.index("-X") + 1] if "-X" in words else "POST" if {"-d", "-F"} & set(words) else "GET"
    try:
        match = resolve(re.sub(r"\b[A-Z]+\b", "1", path))
    except Resolver404:
        match = None
    # The API answers unknown paths with its JSON 404 view, a catch-all route.
    if match is None or match.url_name is None:
        pytest.fail(f"the docs call {path}, which no API endpoint serves")
    view_actions = getattr(match.func, "actions", None)
    if view_actions is not None:
        assert method.lower() in view_actions, f"{path} does not answer {method}"


def check_bench_script(words):
    script = next(w for w in words if w.startswith("bench/"))
    assert (ROOT / script).exists(), f"the docs run {script}, which does not exist"
    flags = [w.split("=", 1)[0] for w in words if w.startswith("--")]
    if not flags:
        return
    shown = subprocess.run([sys.executable, script, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    for flag in flags:
        assert flag in shown.stdout, f"{script} has no option {flag}"


def check_celery_worker(options):
    from celery.bin.worker import worker

    known = {opt for param in worker.params for opt in param.opts}
    for option in options:
        if option.startswith("-"):
            assert option in known, f"celery worker has no option {option}"


@pytest.mark.django_db
def test_drf_create_token_prints_the_key(django_user_model, capsys):
    """The API page's first command, run as it is written there."""
    from django.core.management import call_command

    django_user_model.objects.create_user("admin")
    call_command("drf_create_token", "admin")
    assert re.search(r"\b[0-9a-f]{40}\b", capsys.readouterr().out)
