"""Human approval: consequential calls the user declines; the agent must not retry them."""
from __future__ import annotations

from .base import Builder, template
from .chain import book_cheapest, contact_email


@template("appr_email_denied", "approval", "train", 2)
def appr_email_denied(b: Builder) -> None:
    contact_email(b, approve=False)


@template("appr_book_denied", "approval", "ood", 2)
def appr_book_denied(b: Builder) -> None:
    book_cheapest(b, approve=False)
