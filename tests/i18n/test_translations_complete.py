"""Every shipped interface language translates every participant message,
its compiled catalog is the one in the repository, and no participant string
was added to the code without reaching the catalogs."""

import gettext
import os
import re
import shutil
from collections import Counter
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils.translation import to_locale

# The command that updates the catalogs; the extraction test runs it the same way.
MAKEMESSAGES_IGNORE = [".venv", "tests", "docker", "bench", "data", "templates/admin/*", "evaluation"]
UPDATE_COMMAND = (
    ".venv/bin/python manage.py makemessages -l es -l pt -l de -l fr -l it -l zh_Hans -l ar "
    + " ".join(f'--ignore="{pattern}"' for pattern in MAKEMESSAGES_IGNORE)
    + " --no-obsolete && .venv/bin/python manage.py compilemessages --ignore=.venv"
)

LOCALE_DIR = Path(settings.BASE_DIR) / "locale"
SHIPPED = [code for code, _ in settings.LANGUAGES if code != settings.LANGUAGE_CODE]

# Python's %-formatting: %(name)s, %d, %.1f, %% ...
PLACEHOLDER = re.compile(r"%(?:\([^)]*\))?[#0 +-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[diouxXeEfFgGcrsa%]")
BRACE_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")


def po_path(language: str) -> Path:
    return LOCALE_DIR / to_locale(language) / "LC_MESSAGES" / "django.po"


def load_po(language: str) -> polib.POFile:
    path = po_path(language)
    assert path.is_file(), f"{language}: {path} is missing; run {UPDATE_COMMAND}"
    return polib.pofile(str(path))


def nplurals(po: polib.POFile) -> int:
    match = re.search(r"nplurals\s*=\s*(\d+)", po.metadata.get("Plural-Forms", ""))
    assert match, "the catalog has no Plural-Forms header"
    return int(match.group(1))


def placeholders(entry: polib.POEntry, text: str) -> Counter:
    found = Counter(HTML_TAG.findall(text))
    if "python-format" in entry.flags:
        found += Counter(PLACEHOLDER.findall(text))
    if "python-brace-format" in entry.flags:
        found += Counter(BRACE_PLACEHOLDER.findall(text))
    return found


def test_every_interface_language_but_english_ships_a_catalog():
    assert settings.LANGUAGE_CODE == "en"
    assert {"es", "pt", "de", "fr", "it", "zh-hans"} <= set(SHIPPED)
    assert [str(path) for path in LOCALE_DIR.glob("*/LC_MESSAGES/django.po")], "no catalogs in locale/"


@pytest.mark.parametrize("language", SHIPPED)
def test_catalog_is_complete(language):
    po = load_po(language)
    assert len(po) > 0
    assert not po.metadata_is_fuzzy, f"{language}: the header is marked fuzzy, so msgfmt would drop it"
    assert po.metadata.get("Language") == to_locale(language), f"{language}: the header's Language field"
    forms = nplurals(po)
    problems = []
    for entry in po:
        if entry.obsolete:
            problems.append(f"obsolete: {entry.msgid!r}")
            continue
        if "fuzzy" in entry.flags:
            problems.append(f"fuzzy: {entry.msgid!r}")
        if entry.msgid_plural:
            if sorted(entry.msgstr_plural) != list(range(forms)):
                problems.append(f"has plural forms {sorted(entry.msgstr_plural)}, not {forms}: {entry.msgid!r}")
            expected = placeholders(entry, entry.msgid_plural)
            if placeholders(entry, entry.msgid) != expected:
                problems.append(f"singular and plural msgids differ in placeholders: {entry.msgid!r}")
            for index, text in sorted(entry.msgstr_plural.items()):
                if not text:
                    problems.append(f"msgstr[{index}] untranslated: {entry.msgid!r}")
                elif placeholders(entry, text) != expected:
                    problems.append(
                        f"msgstr[{index}] placeholders {dict(placeholders(entry, text))} "
                        f"!= {dict(expected)}: {entry.msgid!r}"
                    )
        elif not entry.msgstr:
            problems.append(f"untranslated: {entry.msgid!r}")
        elif placeholders(entry, entry.msgstr) != placeholders(entry, entry.msgid):
            problems.append(
                f"placeholders {dict(placeholders(entry, entry.msgstr))} "
                f"!= {dict(placeholders(entry, entry.msgid))}: {entry.msgid!r}"
            )
    assert not problems, f"{po_path(language)}:\n  " + "\n  ".join(problems)


def _catalog(entries) -> dict:
    """What gettext looks up: msgid (with its context) -> translation, one key per plural form."""
    catalog = {}
    for entry in entries:
        key = f"{entry.msgctxt}\x04{entry.msgid}" if entry.msgctxt else entry.msgid
        if entry.msgid_plural:
            for index, text in entry.msgstr_plural.items():
                catalog[(key, int(index))] = text
        else:
            catalog[key] = entry.msgstr
    return catalog


@pytest.mark.parametrize("language", SHIPPED)
def test_compiled_catalog_is_up_to_date(language):
    po = load_po(language)
    mo_path = po_path(language).with_suffix(".mo")
    assert mo_path.is_file(), f"{mo_path} is missing; run {UPDATE_COMMAND}"
    with mo_path.open("rb") as handle:
        shipped = gettext.GNUTranslations(handle)  # the reader Django's translations build on
    compiled = {key: value for key, value in shipped._catalog.items() if key != ""}
    expected = _catalog(entry for entry in po.translated_entries() if not entry.obsolete)
    stale = sorted(str(key) for key in expected.keys() ^ compiled.keys())
    stale += sorted(str(key) for key in expected.keys() & compiled.keys() if expected[key] != compiled[key])
    assert not stale, f"{mo_path} does not match {po_path(language).name}; run {UPDATE_COMMAND}:\n  " + "\n  ".join(
        stale[:20]
    )
    assert shipped._info.get("plural-forms") == po.metadata["Plural-Forms"], f"{mo_path}: Plural-Forms differ"


def _message_keys(catalog: polib._BaseFile) -> set:
    return {(entry.msgctxt, entry.msgid, entry.msgid_plural) for entry in catalog if not entry.obsolete and entry.msgid}


def _copy_sources(target: Path) -> None:
    """The project's translatable files (.py, .html, .txt), without the catalogs,
    the folders makemessages is told to skip anyway, and the media and static
    roots, which makemessages skips in the project itself."""
    base = Path(settings.BASE_DIR)
    skipped_top = {".git", "locale", "node_modules", *MAKEMESSAGES_IGNORE}
    skipped_roots = {Path(root).resolve() for root in (settings.MEDIA_ROOT, settings.STATIC_ROOT) if root}

    def ignore(folder, names):
        inside = Path(folder).relative_to(base)
        return {
            name
            for name in names
            if (inside == Path(".") and name in skipped_top)
            or name == "__pycache__"
            or (Path(folder) / name).resolve() in skipped_roots
            or ((Path(folder) / name).is_file() and Path(name).suffix not in (".py", ".html", ".txt"))
        }

    shutil.copytree(base, target, ignore=ignore, symlinks=True)


def test_every_participant_string_in_the_code_is_in_the_catalogs(tmp_path, settings, monkeypatch):
    """makemessages, run as the catalogs are updated, finds exactly the shipped messages."""
    if not all(shutil.which(tool) for tool in ("xgettext", "msguniq", "msgmerge", "msgattrib")):
        reason = "GNU gettext (xgettext) is not installed; .ci/run installs it"
        if os.environ.get("CI"):
            pytest.fail(reason + ", so in CI this is a failure")
        pytest.skip(reason)
    sources, output = tmp_path / "src", tmp_path / "locale"
    _copy_sources(sources)
    settings.LOCALE_PATHS = [str(output)]
    monkeypatch.chdir(sources)
    call_command(
        "makemessages",
        locale=["es"],
        ignore_patterns=list(MAKEMESSAGES_IGNORE),
        no_obsolete=True,
        keep_pot=True,
        verbosity=0,
    )
    found = _message_keys(polib.pofile(str(output / "django.pot")))
    assert found, "makemessages found no messages at all"
    for language in SHIPPED:
        shipped = _message_keys(load_po(language))
        new = sorted(msgid for _, msgid, _ in found - shipped)
        gone = sorted(msgid for _, msgid, _ in shipped - found)
        assert not new and not gone, (
            f"{po_path(language)} is out of step with the code; run {UPDATE_COMMAND} and translate:\n"
            f"  in the code, not in the catalog: {new}\n  in the catalog, not in the code: {gone}"
        )
