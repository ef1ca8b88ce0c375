"""The local server (site, an OpenAI-compatible API with tools, streaming and a fallback chain,
live episodes), a client that drives episodes through it, and the serve_eval stage's work.

Layer: serve. May import every layer but stages.
"""
