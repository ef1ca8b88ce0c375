"""Two disjoint alias vocabularies for renaming tools and parameters.

25% of training tasks are renamed from the ``train`` vocabulary; every tool and
parameter of ``eval_renamed`` comes from the ``heldout`` vocabulary, so a model
must read the catalogue rather than memorise names. The two vocabularies share no
name (checked at import).
"""
from __future__ import annotations

import random

# tool: (train aliases, held-out aliases)
TOOL_ALIASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "find_contact": (("lookup_person", "contact_search", "fetch_contact"), ("people_finder", "directory_query", "resolve_person")),
    "list_events": (("calendar_day", "events_on", "fetch_agenda"), ("agenda_view", "day_schedule", "schedule_query")),
    "create_event": (("add_event", "schedule_event", "calendar_insert"), ("book_meeting_slot", "new_appointment", "agenda_add")),
    "send_email": (("email_send", "dispatch_mail", "mail_out"), ("compose_and_send", "post_message", "outbox_push")),
    "get_weather": (("weather_now", "fetch_weather", "current_conditions"), ("sky_report", "meteo_query", "climate_status")),
    "get_weather_backup": (("weather_secondary", "fetch_weather_alt", "conditions_mirror"), ("sky_report_spare", "meteo_fallback", "climate_status_b")),
    "get_fx_rate": (("fx_quote", "rate_lookup", "exchange_rate"), ("currency_ratio", "forex_peek", "money_rate")),
    "convert_currency": (("fx_convert", "money_convert", "currency_exchange"), ("cash_translate", "forex_apply", "value_in_currency")),
    "get_order": (("order_lookup", "fetch_order", "order_details"), ("purchase_info", "sale_record", "shop_order_query")),
    "issue_refund": (("refund_order", "make_refund", "refund_payment"), ("reimburse_purchase", "money_back", "credit_customer")),
    "search_files": (("file_search", "find_files", "locate_file"), ("docs_query", "drive_lookup", "storage_find")),
    "read_file": (("file_read", "open_file", "fetch_file"), ("docs_open", "drive_get", "storage_read")),
    "delete_file": (("file_delete", "remove_file", "erase_file"), ("docs_purge", "drive_trash", "storage_drop")),
    "create_ticket": (("open_ticket", "ticket_new", "file_issue"), ("helpdesk_report", "raise_incident", "support_case_add")),
    "calculate": (("calc", "compute", "math_eval"), ("arith_solve", "number_cruncher", "evaluate_sum")),
    "search_flights": (("flight_search", "find_flights", "list_flights"), ("air_options", "route_fares", "trip_finder")),
    "book_flight": (("flight_book", "reserve_flight", "buy_ticket"), ("air_purchase", "seat_reserve", "trip_confirm")),
    "find_product": (("product_lookup", "stock_query", "item_search"), ("warehouse_probe", "catalog_item", "sku_finder")),
    "reserve_stock": (("stock_reserve", "hold_units", "allocate_stock"), ("warehouse_hold", "put_aside", "earmark_units")),
    "geocode": (("place_lookup", "locate_place", "coords_for"), ("map_resolve", "where_is", "position_of")),
    "get_local_time": (("local_clock", "time_at", "clock_lookup"), ("zone_time", "wall_clock_at", "hour_there")),
}

# parameter: (train aliases, held-out aliases)
PARAM_ALIASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "name": (("full_name", "person"), ("who", "display_name")),
    "date": (("day", "on_date"), ("when_day", "calendar_date")),
    "title": (("subject_line", "label"), ("heading", "caption")),
    "time": (("start_time", "at"), ("clock_time", "begins")),
    "attendees": (("guests", "invitees"), ("participants", "people")),
    "to": (("recipient", "address"), ("send_to", "destination_email")),
    "subject": (("topic", "headline"), ("re", "summary_line")),
    "body": (("message", "text"), ("content", "contents")),
    "city": (("location", "town"), ("place_name", "municipality")),
    "base": (("from_code", "source"), ("sell", "origin_currency")),
    "quote": (("to_code", "target"), ("buy", "counter_currency")),
    "amount": (("value", "sum"), ("quantity_money", "figure")),
    "from_currency": (("source_currency", "from_code"), ("sell_currency", "origin_money")),
    "to_currency": (("target_currency", "to_code"), ("buy_currency", "dest_money")),
    "order_id": (("order_ref", "order_number"), ("purchase_id", "sale_ref")),
    "query": (("pattern", "search_text"), ("keywords", "lookup_text")),
    "file_id": (("file_ref", "document_id"), ("doc_key", "blob_id")),
    "priority": (("urgency", "severity"), ("importance", "level")),
    "expression": (("formula", "math"), ("equation", "calc_input")),
    "origin": (("from_city", "departure"), ("leave_from", "start_city")),
    "destination": (("to_city", "arrival"), ("fly_to", "end_city")),
    "flight_id": (("flight_ref", "flight_number"), ("fare_id", "trip_key")),
    "sku": (("item_code", "product_code"), ("stock_key", "article_no")),
    "quantity": (("units", "count"), ("how_many", "number_of_units")),
    "place": (("place_query", "address_text"), ("spot", "locality")),
    "location_id": (("location_ref", "loc_id"), ("geo_key", "site_id")),
}

VOCABULARIES = ("train", "heldout")


def _check_disjoint() -> None:
    for table in (TOOL_ALIASES, PARAM_ALIASES):
        train = {a for t, _ in table.values() for a in t}
        held = {a for _, h in table.values() for a in h}
        assert not train & held, f"alias vocabularies overlap: {sorted(train & held)}"


_check_disjoint()


def draw_aliases(rng: random.Random, tools: list[str], params: dict[str, list[str]],
                 vocabulary: str) -> dict:
    """Pick a surface name for every tool and every parameter of those tools.

    Returns ``{"tools": {canonical: alias}, "params": {canonical_tool: {param: alias}}}``.
    Parameter aliases are unique within a tool.
    """
    k = VOCABULARIES.index(vocabulary)
    tool_map = {t: rng.choice(TOOL_ALIASES[t][k]) for t in tools}
    param_map: dict[str, dict[str, str]] = {}
    for t in tools:
        chosen: dict[str, str] = {}
        for p in params[t]:
            options = [a for a in PARAM_ALIASES[p][k] if a not in chosen.values()]
            chosen[p] = rng.choice(options)
        param_map[t] = chosen
    return {"tools": tool_map, "params": param_map}
