"""The report and the site: builders that read pipeline artifacts only (never training or evaluation code).

Layer: report. May import analysis and every layer below it (it reads artifacts, never runs models).
"""
