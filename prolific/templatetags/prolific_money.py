"""`{{ cents|cents:currency }}`: an amount kept in cents, shown in the currency (1133.34 -> 11.33 GBP)."""

from django import template

from prolific.services.costs import money

register = template.Library()


@register.filter
def cents(value, currency: str = "") -> str:
    return money(value or 0, currency)
