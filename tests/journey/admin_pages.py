"""What a researcher clicks and types in the admin, in one place, so that a changed label or
field needs one edit here. The screening-question and attention-check inlines are filled as a
person fills them, without JSON: a question's answers one per line (its qualifying answers
likewise), a check's required levels as "word index: level" lines (0-based, as the word
indices the admin's errors name)."""

from playwright.sync_api import Page, expect


def log_in(page: Page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Site administration")).to_be_visible()


def _add_inline_row(page: Page, prefix: str) -> str:
    """Click the inline's "Add another …" link; the new row's field name prefix."""
    group = page.locator(f"#{prefix}-group")
    before = int(page.input_value(f"#id_{prefix}-TOTAL_FORMS"))
    group.locator(".add-row a").click()
    expect(page.locator(f"#id_{prefix}-TOTAL_FORMS")).to_have_value(str(before + 1))
    return f"{prefix}-{before}"


def add_screening_question(page: Page, *, text: str, choices: list[str], accepted: list[str]) -> None:
    row = _add_inline_row(page, "prerequisites")
    page.fill(f"#id_{row}-text", text)
    page.fill(f"#id_{row}-choices", "\n".join(choices))
    page.fill(f"#id_{row}-accepted", "\n".join(accepted))


def add_attention_check(page: Page, *, clip_pk: int, levels: dict[int, int]) -> None:
    """The clip by its id (what the raw-id field's lookup fills in) and the levels it requires."""
    fill_attention_check(page, _add_inline_row(page, "attention_checks"), clip_pk=clip_pk, levels=levels)


def fill_attention_check(page: Page, row: str, *, clip_pk: int, levels: dict[int, int]) -> None:
    """The check's row `row` (e.g. "attention_checks-0"), filled anew."""
    page.fill(f"#id_{row}-clip", str(clip_pk))
    page.select_option(f"#id_{row}-kind", "instructed")
    # The words by position, counted from 1, in the field of their level (no JSON to type).
    fields = {2: "heavily_emphasized", 1: "emphasized", 0: "unmarked"}
    for level, name in fields.items():
        positions = [str(index + 1) for index, wanted in sorted(levels.items()) if wanted == level]
        page.fill(f"#id_{row}-{name}", ", ".join(positions))


def run_admin_action(page: Page, *, row_text: str, action_label: str) -> None:
    """Tick the change-list row showing `row_text`, choose the action, press Go."""
    page.locator("#result_list tbody tr", has_text=row_text).locator("input.action-select").check()
    page.select_option("select[name=action]", label=action_label)
    page.get_by_role("button", name="Go").click()
