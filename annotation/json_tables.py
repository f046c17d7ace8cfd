"""JSON fields on the admin's read-only pages as tables, not one line of JSON: an object is a table
of its keys, an object of like objects (a label set's annotators with their reliability, SE and
words) a table with a row each and a column per key, a list of objects a table with a column per
key, a list of plain values a comma-separated line. config.admin_app puts json_field_html in place
of Django's display of read-only JSON fields (django.contrib.admin.helpers.display_for_field).

What is deeper than MAX_DEPTH tables, or longer than MAX_ROWS rows, is shown as JSON (the rest of a
long list counted), so a page never grows without bound.
"""

import json

from django.contrib.admin.utils import display_for_field
from django.db import models
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

MAX_DEPTH = 4
MAX_ROWS = 200


def display_for_field_with_tables(value, field, empty_value_display, avoid_link=False):
    """Django's display_for_field, but a non-empty JSON object or list is a table (json_field_html)."""
    if isinstance(field, models.JSONField) and isinstance(value, (dict, list)) and value:
        return json_field_html(value)
    return display_for_field(value, field, empty_value_display, avoid_link=avoid_link)


def json_field_html(value) -> SafeString:
    # One line: the admin turns line breaks in read-only values into <br>.
    return mark_safe(f'<div class="json-table">{_html(value, 0)}</div>')


def _html(value, depth: int) -> str:
    if isinstance(value, dict) and value:
        if depth >= MAX_DEPTH:
            return _json(value)
        columns = _record_columns(value.values())
        if columns:
            return _records_table([(key, record) for key, record in value.items()], columns, depth, keyed=True)
        rows = list(value.items())
        body = "".join(
            format_html("<tr><th scope='row'>{}</th><td>{}</td></tr>", key, mark_safe(_html(item, depth + 1)))
            for key, item in rows[:MAX_ROWS]
        )
        return f"<table><tbody>{body}{_more(len(rows), 2)}</tbody></table>"
    if isinstance(value, list) and value:
        if depth >= MAX_DEPTH:
            return _json(value)
        columns = _record_columns(value)
        if columns:
            return _records_table(list(enumerate(value)), columns, depth, keyed=False)
        if all(_plain(item) for item in value):
            return ", ".join(_scalar(item) for item in value)
        body = "".join(f"<tr><td>{_html(item, depth + 1)}</td></tr>" for item in value[:MAX_ROWS])
        return f"<table><tbody>{body}{_more(len(value), 1)}</tbody></table>"
    return _scalar(value)


def _record_columns(items) -> list[str] | None:
    """The keys, in first-seen order, when every item is a non-empty object of plain values
    (a table with a row an item reads best); else None."""
    items = list(items)
    if len(items) < 2 or not all(isinstance(item, dict) and item for item in items):
        return None
    if not all(_plain(value) or _short_list(value) for item in items for value in item.values()):
        return None
    return list(dict.fromkeys(key for item in items for key in item))


def _records_table(rows: list[tuple], columns: list[str], depth: int, *, keyed: bool) -> str:
    head = format_html_join("", "<th scope='col'>{}</th>", ((column,) for column in columns))
    first = "<th scope='col'></th>" if keyed else ""
    body = "".join(
        (format_html("<tr><th scope='row'>{}</th>", key) if keyed else "<tr>")
        + format_html_join(
            "", "<td>{}</td>", ((mark_safe(_html(record.get(column, ""), depth + 1)),) for column in columns)
        )
        + "</tr>"
        for key, record in rows[:MAX_ROWS]
    )
    width = len(columns) + (1 if keyed else 0)
    return f"<table><thead><tr>{first}{head}</tr></thead><tbody>{body}{_more(len(rows), width)}</tbody></table>"


def _plain(value) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _short_list(value) -> bool:
    return isinstance(value, list) and len(value) <= 10 and all(_plain(item) for item in value)


def _scalar(value) -> str:
    if isinstance(value, str):
        return format_html("{}", value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return format_html("{}", json.dumps(value))  # null, true, false, integers; {} and [] when empty


def _json(value) -> str:
    return format_html("<code>{}</code>", json.dumps(value, ensure_ascii=False))


def _more(total: int, width: int) -> str:
    if total <= MAX_ROWS:
        return ""
    return format_html("<tr><td colspan='{}'>… and {} more</td></tr>", width, total - MAX_ROWS)
