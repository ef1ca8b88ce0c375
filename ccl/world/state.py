"""The seeded world the simulated tools act on, and the entity pools tasks draw from.

A task carries its whole initial world state as plain JSON, so an episode can be
replayed from the task record alone. Training draws names and cities from a strict
subset of the evaluation pools (leakage control v of the write-up).
"""
from __future__ import annotations

import copy
import random
from typing import Any

FIRST_NAMES = [
    "Alice", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas",
    "Kavya", "Liam", "Maya", "Nikolai", "Olivia", "Pedro", "Quinn", "Rosa", "Sven", "Tara",
    "Umar", "Vera", "Wen", "Ximena", "Yusuf", "Zoe", "Aaron", "Bianca",
    # evaluation-only
    "Caspar", "Dalia", "Emeka", "Freya", "Goran", "Hana", "Ivo", "Jade", "Kofi", "Leila",
]
LAST_NAMES = [
    "Adler", "Becker", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Haddad", "Ivanova",
    "Jensen", "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quiroga",
    "Rossi", "Schmidt", "Tanaka",
    # evaluation-only
    "Ueda", "Varga", "Weber", "Xu", "Yilmaz", "Zeller", "Abara", "Brandt",
]
N_TRAIN_FIRST, N_TRAIN_LAST = 28, 20

# city: (latitude, longitude, UTC offset in hours)
CITIES: dict[str, tuple[float, float, int]] = {
    "Paris": (48.86, 2.35, 1), "Berlin": (52.52, 13.40, 1), "Madrid": (40.42, -3.70, 1),
    "Rome": (41.90, 12.50, 1), "London": (51.51, -0.13, 0), "Dublin": (53.35, -6.26, 0),
    "Lisbon": (38.72, -9.14, 0), "Oslo": (59.91, 10.75, 1), "Vienna": (48.21, 16.37, 1),
    "Prague": (50.08, 14.44, 1), "Warsaw": (52.23, 21.01, 1), "Athens": (37.98, 23.73, 2),
    "Tokyo": (35.68, 139.69, 9), "Seoul": (37.57, 126.98, 9), "Sydney": (-33.87, 151.21, 11),
    "Toronto": (43.65, -79.38, -5), "Chicago": (41.88, -87.63, -6), "Denver": (39.74, -104.99, -7),
    "Boston": (42.36, -71.06, -5), "Mumbai": (19.08, 72.88, 5),
    # evaluation-only
    "Nairobi": (-1.29, 36.82, 3), "Lima": (-12.05, -77.04, -5), "Hanoi": (21.03, 105.85, 7),
    "Reykjavik": (64.15, -21.94, 0), "Tbilisi": (41.72, 44.79, 4), "Montreal": (45.50, -73.57, -5),
    "Auckland": (-36.85, 174.76, 13), "Cairo": (30.04, 31.24, 2),
}
N_TRAIN_CITIES = 20

# ISO code: (English name, symbol or None, units per US dollar around which rates are drawn)
CURRENCIES: dict[str, tuple[str, str | None, float]] = {
    "USD": ("US dollar", "$", 1.0), "EUR": ("euro", "€", 0.92), "GBP": ("British pound", "£", 0.79),
    "JPY": ("Japanese yen", "¥", 150.0), "CHF": ("Swiss franc", None, 0.88),
    "CAD": ("Canadian dollar", None, 1.36), "AUD": ("Australian dollar", None, 1.52),
    "INR": ("Indian rupee", "₹", 83.0), "KRW": ("South Korean won", "₩", 1330.0),
    "SEK": ("Swedish krona", None, 10.4), "NOK": ("Norwegian krone", None, 10.6),
    "PLN": ("Polish zloty", "zł", 4.0),
}

CONDITIONS = ["sunny", "cloudy", "rainy", "snowing", "windy", "foggy", "overcast", "stormy"]
ORDER_STATUSES = ["processing", "shipped", "delivered", "cancelled", "on hold", "returned"]
PRODUCTS = ["desk lamp", "office chair", "monitor stand", "usb hub", "keyboard", "webcam",
            "headset", "laptop sleeve", "standing mat", "whiteboard", "label printer", "router"]
FILE_TOPICS = ["budget", "roadmap", "onboarding", "security", "hiring", "offsite", "pricing",
               "retro", "migration", "vendor", "compliance", "launch"]
FILE_KINDS = ["notes", "plan", "draft", "summary", "checklist", "report"]
CODE_WORDS = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo",
              "juniper", "kestrel", "lagoon", "meadow", "nimbus", "onyx", "pebble", "quartz",
              "raven", "sierra", "tundra", "umbra", "velvet", "willow", "zephyr"]


def name_pool(pool: str) -> tuple[list[str], list[str]]:
    if pool == "train":
        return FIRST_NAMES[:N_TRAIN_FIRST], LAST_NAMES[:N_TRAIN_LAST]
    return FIRST_NAMES, LAST_NAMES


def city_pool(pool: str) -> list[str]:
    names = list(CITIES)
    return names[:N_TRAIN_CITIES] if pool == "train" else names


def email_of(full_name: str) -> str:
    first, last = full_name.lower().split(" ", 1)
    return f"{first}.{last.replace(' ', '')}@example.com"


def empty_state(today: str) -> dict[str, Any]:
    return {
        "today": today, "contacts": [], "events": [], "weather": {}, "fx": {}, "orders": {},
        "files": {}, "flights": [], "products": {}, "locations": {}, "now_utc": f"{today}T12:00",
        "outbox": [], "tickets": [], "refunds": [], "bookings": [], "reservations": [],
        "deleted": [],
    }


class World:
    """Mutable world state for one episode; tools read and change ``state``."""

    def __init__(self, state: dict[str, Any]):
        self.state = copy.deepcopy(state)

    def new_id(self, prefix: str, bucket: str) -> str:
        """Deterministic identifiers for created objects (tickets, refunds, ...)."""
        return f"{prefix}-{1001 + len(self.state[bucket])}"


def fx_rates(rng: random.Random) -> dict[str, float]:
    """Per-task exchange rates (units per USD), jittered so answers need the tool."""
    return {code: round(base * rng.uniform(0.9, 1.1), 4) if code != "USD" else 1.0
            for code, (_, _, base) in CURRENCIES.items()}
