"""Termination: requests that need no tool at all; the agent must answer and stop."""
from __future__ import annotations

from .base import Builder, template


@template("term_smalltalk", "termination", "train", 0)
def term_smalltalk(b: Builder) -> None:
    b.request = b.pick(["Thanks, that's all for today!", "Hi there, just saying hello.",
                        "Great job earlier, no further questions.", "Cheers, talk tomorrow!"])
    b.say("You're welcome, have a good day!")


@template("term_no_lookup", "termination", "train", 0)
def term_no_lookup(b: Builder) -> None:
    oid = b.order()
    status = b.state["orders"][oid]["status"]
    b.extra_tools.append("get_order")  # the tempting tool is in the catalogue
    b.request = (f"I already checked: order {oid} is {status}. No need to look anything up, "
                 f"just confirm you got my message.")
    b.say(f"Noted: order {oid} is {status}.")


@template("term_capability", "termination", "ood", 0)
def term_capability(b: Builder) -> None:
    b.extra_tools.append("get_weather")
    b.request = ("Which of your tools would tell me the weather in a city? Just name it, "
                 "don't run anything.")
    b.fact_tools.append("get_weather")
    b.say("That would be {tool:get_weather}.")
