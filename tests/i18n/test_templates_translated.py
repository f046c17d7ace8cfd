"""Every fixed string a participant sees in a template goes through {% translate %}.

The checker walks the Django template tokens: text inside {% blocktranslate %}
... {% endblocktranslate %} is translated, and tags and variables are not fixed
text. Everything else is HTML that must hold no letters a person reads: text
nodes and human-facing attributes. Script and style contents, comments and
HTML entities are left alone.
"""

import re
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.template import engines
from django.template.base import DebugLexer, TokenType

# Error pages a project may override at the root of a template folder.
ERROR_PAGES = ("400.html", "403.html", "403_csrf.html", "404.html", "500.html", "503.html")

# Attributes a person reads or hears (screen readers announce aria-*).
HUMAN_ATTRIBUTES = {
    "aria-label",
    "aria-description",
    "aria-roledescription",
    "aria-placeholder",
    "aria-valuetext",
    "title",
    "alt",
    "placeholder",
}
# <input type=...> whose value is the label on the button.
BUTTON_INPUT_TYPES = {"submit", "button", "reset"}
# <meta name=...> whose content a person reads (htmx-config, viewport and the like are for machines).
HUMAN_META_NAMES = {"description", "application-name", "apple-mobile-web-app-title"}

# Stands in for everything the template engine fills in: no letter, no markup.
FILLED = "\ue000"

BLOCKTRANSLATE = {"blocktranslate", "blocktrans"}
ENDBLOCKTRANSLATE = {"endblocktranslate", "endblocktrans"}


def has_letters(text: str) -> bool:
    return any(unicodedata.category(char).startswith("L") for char in text)


# A {% block %} that only holds attributes, filling a start tag of the parent
# template (<body{% block body_attrs %}{% endblock %}>), e.g. ` hx-headers='{...}'`.
ATTRIBUTES_ONLY = re.compile(r"""(?:\s+[^\s"'<>/=]+(?:=(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)+\s*""", re.DOTALL)


def fixed_html(source: str) -> str:
    """The template's own HTML, with every tag, variable, comment and
    translated block replaced by FILLED (newlines kept, so lines still match)."""
    parts = []
    blocks = []  # where each open {% block %}'s contents start in parts
    in_blocktranslate = in_comment = False
    for token in DebugLexer(source).tokenize():
        start, end = token.position
        raw = source[start:end]
        fixed = False
        if token.token_type == TokenType.BLOCK:
            name = token.split_contents()[0] if token.contents else ""
            if name in BLOCKTRANSLATE:
                in_blocktranslate = True
            elif name in ENDBLOCKTRANSLATE:
                in_blocktranslate = False
            elif name == "comment":
                in_comment = True
            elif name == "endcomment":
                in_comment = False
            elif name == "block" and not (in_blocktranslate or in_comment):
                blocks.append(len(parts) + 1)
            elif name == "endblock" and blocks:
                _wrap_attributes_only(parts, blocks.pop())
        elif token.token_type == TokenType.TEXT:
            fixed = not (in_blocktranslate or in_comment)
        parts.append(raw if fixed else FILLED + "\n" * raw.count("\n"))
    return "".join(parts)


def _wrap_attributes_only(parts: list[str], start: int) -> None:
    """Give a block of bare attributes a start tag of its own, so that its
    attributes are read as attributes and not as text."""
    inner = "".join(parts[start:])
    if ATTRIBUTES_ONLY.fullmatch(inner) and re.search(r"""=["']""", inner):
        parts.insert(start, "<x-attributes ")
        parts.append(">")


def shown(text: str) -> str:
    """Text as a developer reads it in a failure: what the engine fills in is '…'."""
    return " ".join(re.sub(rf"(?:{FILLED}\s*)+", " … ", text).split())


class _FixedTextFinder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=False)  # entities arrive apart and are skipped
        self.problems: list[tuple[int, str]] = []
        self.raw_text_depth = 0  # inside <script> or <style>

    def handle_starttag(self, tag, attrs):
        self._check_attributes(tag, attrs)
        if tag in ("script", "style"):
            self.raw_text_depth += 1

    def handle_startendtag(self, tag, attrs):
        self._check_attributes(tag, attrs)

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.raw_text_depth:
            self.raw_text_depth -= 1

    def handle_data(self, data):
        if self.raw_text_depth or not has_letters(data):
            return
        line, _ = self.getpos()
        first = next(i for i, char in enumerate(data) if unicodedata.category(char).startswith("L"))
        self.problems.append((line + data[:first].count("\n"), shown(data)))

    def _check_attributes(self, tag, attrs):
        values = dict(attrs)
        checked = set(HUMAN_ATTRIBUTES)
        if tag == "input" and (values.get("type") or "").lower() in BUTTON_INPUT_TYPES:
            checked.add("value")
        if tag in ("option", "optgroup", "track"):
            checked.add("label")
        if tag == "meta" and (values.get("name") or "").lower() in HUMAN_META_NAMES:
            checked.add("content")
        line, _ = self.getpos()
        start_tag = self.get_starttag_text() or ""
        for name, value in attrs:
            if name in checked and value and has_letters(value):
                offset = start_tag.find(name)
                where = line + start_tag[: max(offset, 0)].count("\n")
                self.problems.append((where, f'<{tag} {name}="{shown(value)}">'))


def untranslated_strings(source: str) -> list[tuple[int, str]]:
    """(line, text) for each piece of fixed, readable text that is not translated."""
    finder = _FixedTextFinder()
    finder.feed(fixed_html(source))
    finder.close()
    return finder.problems


def participant_templates() -> list[tuple[str, Path]]:
    found = {}
    for folder in engines["django"].template_dirs:
        folder = Path(folder)
        for path in sorted((folder / "participant").rglob("*.html")):
            found.setdefault(path.relative_to(folder).as_posix(), path)
        for name in ERROR_PAGES:
            if (folder / name).is_file():
                found.setdefault(name, folder / name)
    return sorted(found.items())


TEMPLATES = participant_templates()


def test_the_participant_templates_are_found():
    names = {name for name, _ in TEMPLATES}
    assert {
        "participant/consent.html",
        "participant/screening.html",
        "participant/task.html",
        "participant/listening_form_task.html",
        "participant/done.html",
        "participant/message.html",
    } <= names


@pytest.mark.parametrize(("name", "path"), TEMPLATES, ids=[name for name, _ in TEMPLATES])
def test_participant_template_has_no_untranslated_text(name, path):
    problems = untranslated_strings(path.read_text(encoding="utf-8"))
    assert not problems, "untranslated text (wrap it in {% translate %} or {% blocktranslate %}):\n" + "\n".join(
        f"  {name}:{line}: {text}" for line, text in problems
    )


# The checker itself: it must find what it is meant to find, and nothing else.


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("<p>Hello</p>", [(1, "Hello")]),
        ("<p>Hello {{ name }}</p>", [(1, "Hello …")]),
        (
            "{% load i18n %}\n<h1>{% translate 'Consent' %}</h1>\n<p>\n  Please read this.\n</p>",
            [(4, "Please read this.")],
        ),
        ("<p>{% if a %}Yes{% else %}{% translate 'No' %}{% endif %}</p>", [(1, "… Yes …")]),
        ("<p>确认</p>", [(1, "确认")]),
        ("<p>شكرا</p>", [(1, "شكرا")]),
        ('<button aria-label="Close">&times;</button>', [(1, '<button aria-label="Close">')]),
        ('<img src="a.png" alt="Logo">', [(1, '<img alt="Logo">')]),
        ('<input type="text" placeholder="Your name">', [(1, '<input placeholder="Your name">')]),
        ('<input type="submit" value="Send">', [(1, '<input value="Send">')]),
        ('<abbr title="{{ x }} words">{{ n }}</abbr>', [(1, '<abbr title="… words">')]),
        ('<meta name="description" content="A study">', [(1, '<meta content="A study">')]),
        ('<div\n  class="x"\n  title="Levels">', [(3, '<div title="Levels">')]),
        ("{% blocktranslate %}One{% endblocktranslate %} Two", [(1, "… Two")]),
        ("{% block body_attrs %} title='Main page'{% endblock %}", [(1, '<x-attributes title="Main page">')]),
        ("{% block title %}Study = 'x'{% endblock %}", [(1, "… Study = 'x' …")]),
    ],
)
def test_the_checker_finds_untranslated_text(source, expected):
    assert untranslated_strings(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "{% load i18n %}<p>{% translate 'Hello' %}</p>",
        "<p>{% blocktranslate with n=count %}Hello {{ n }}{% endblocktranslate %}</p>",
        "<p>{% blocktranslate count n=count %}One try{% plural %}{{ n }} tries{% endblocktranslate %}</p>",
        '<p data-too-few="{% blocktranslate count c=m %}Mark {{ c }} word.{% plural %}Mark {{ c }} words.{% endblocktranslate %}"></p>',
        '<p data-listen="{% translate \'Listen to the clip.\' %}" class="note" id="gate-reason"></p>',
        '<script>const words = "some words"; if (a < b) {}</script><style>body { color: red }</style>',
        '<meta name="htmx-config" content=\'{"responseHandling":[{"code":"204","swap":false}]}\'>',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta http-equiv="refresh" content="5;url={{ link }}">',
        "<p>&nbsp;&times; &#8212; 1, 2 – 3 · … (0) [1] %</p>",
        '<button type="submit" name="agree" value="yes">{% translate "I agree" %}</button>',
        '<input type="hidden" name="levels" value="abc"><input type="range" value="{{ v|default:50 }}">',
        "<!doctype html><!-- a note for developers --><p>{# a template comment #}</p>",
        "{% comment %}Developers only{% endcomment %}<kbd>0</kbd>",
        '<html lang="{{ LANGUAGE_CODE }}" dir="{% if RTL %}rtl{% else %}ltr{% endif %}"><body{% block b %}{% endblock %}>',
        "<title>{% block title %}{{ study.name }}{% endblock %}</title>",
        '{% block body_attrs %} hx-headers=\'{"X-CSRFToken": "{{ csrf_token }}"}\'{% endblock %}',
    ],
)
def test_the_checker_accepts_translated_and_machine_text(source):
    assert untranslated_strings(source) == []


def test_the_checker_names_template_line_and_text():
    """The failure message a developer sees points at the offending text."""
    bad = "{% load i18n %}\n<h1>{% translate 'Thank you!' %}</h1>\n<p>Your code is below.</p>\n"
    problems = untranslated_strings(bad)
    assert problems == [(3, "Your code is below.")]
