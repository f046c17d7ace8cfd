import markdown as markdown_lib
import nh3
from django import template
from django.utils.safestring import mark_safe

register = template.Library()


@register.filter
def markdown(text: str) -> str:
    """Researcher-written Markdown, sanitized: no scripts, no styles, no event handlers."""
    return mark_safe(nh3.clean(markdown_lib.markdown(text or "", extensions=["extra"])))
