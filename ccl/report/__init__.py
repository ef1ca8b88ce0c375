"""The report and the site: builders that read pipeline artifacts only (never training or evaluation code)."""
