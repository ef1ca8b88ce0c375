"""The one door to the ``bfcl_eval`` package (the Berkeley Function Calling Leaderboard's own code).

What is used of it, unchanged: its data files and their loading (``load_dataset_entry``,
``load_ground_truth_entry``, which add BFCL's language hint to every function description), the
conversion of its function documents to OpenAI ``tools`` that its OpenAI-compatible handler sends
(``convert_to_tool`` with ``GORILLA_TO_OPENAPI``: dots in names become underscores, BFCL types become
JSON-schema types), that handler's decoding of ``tool_calls`` (``decode_ast`` in function-calling
mode), and its per-entry checkers (``_evaluate_single_ast_entry``, ``_evaluate_single_relevance_entry``,
which call ``ast_checker``).

What is replaced, and why: ``bfcl_eval.constants.model_config`` is BFCL's registry of some hundred
hosted and local models; importing it imports every vendor SDK (anthropic, cohere, mistralai,
google-genai, boto3, qwen-agent, writer-sdk, ...). Installing them with their dependencies means 85
more packages, among them a CUDA build of torch and numpy 1.26.4, which the project's lock (numpy 2)
cannot hold (measured with ``pip install --dry-run --report`` on 2026-12-05). The checker reads the
registry for one thing: whether a model's API turned dots in function names into underscores
(``underscore_to_dot``). So the registry module is replaced, before anything of BFCL is imported, by
a one-entry table for this harness, which sends names as BFCL's OpenAI handler does (dots to
underscores) and so declares ``underscore_to_dot=True``, as BFCL's own entries for OpenAI-compatible
function-calling models do. BFCL's remaining imports need five small packages beside it in the lock
(tree-sitter and its Java and JavaScript grammars, tenacity, overrides).

BFCL writes lock files and result folders under ``BFCL_PROJECT_ROOT`` at import; it is pointed at a
temporary folder unless the caller set it.
"""
from __future__ import annotations

import os
import sys
import tempfile
import types
from dataclasses import dataclass
from importlib import metadata
from typing import Any

# The model name this harness gives BFCL's checker (no underscores: BFCL reads them as slashes).
HARNESS = "ccl-openai-tools"
PACKAGE = "bfcl-eval"


@dataclass(frozen=True)
class _RegistryEntry:
    """The fields of BFCL's ModelConfig that its checkers read."""

    is_fc_model: bool = True
    underscore_to_dot: bool = True


def _install_registry() -> None:
    name = "bfcl_eval.constants.model_config"
    if name in sys.modules:
        if HARNESS not in getattr(sys.modules[name], "MODEL_CONFIG_MAPPING", {}):
            raise ImportError(f"{name} was imported before ccl.external.bfcl_lib, which must replace it; "
                              "import BFCL's checker only through ccl.external.bfcl_lib")
        return
    registry = types.ModuleType(name)
    registry.__doc__ = "ccl.external.bfcl_lib's stand-in for BFCL's model registry (see that module)."
    registry.MODEL_CONFIG_MAPPING = {HARNESS: _RegistryEntry()}  # type: ignore[attr-defined]
    sys.modules[registry.__name__] = registry


os.environ.setdefault("BFCL_PROJECT_ROOT", os.path.join(tempfile.gettempdir(), "ccl-bfcl"))
_install_registry()

# Imported only after the stand-in is in place (the order matters, so isort must not move these).
from bfcl_eval.constants.enums import Language, ModelStyle, ReturnFormat  # noqa: E402
from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI  # noqa: E402
from bfcl_eval.eval_checker import eval_runner  # noqa: E402
from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler  # noqa: E402
from bfcl_eval.model_handler.utils import convert_to_tool  # noqa: E402
from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry  # noqa: E402


def version() -> str:
    """The installed bfcl-eval release (the checker's version, recorded with every result)."""
    return metadata.version(PACKAGE)


def entries(category: str) -> list[dict]:
    """BFCL's test entries of ``category`` (``id``, ``question``, ``function``), as BFCL prepares them."""
    return load_dataset_entry(category)


def ground_truth(category: str) -> dict[str, list]:
    """Entry id -> BFCL's possible answers (empty for irrelevance, which has none)."""
    if "irrelevance" in category:
        return {}
    return {row["id"]: row["ground_truth"] for row in load_ground_truth_entry(category)}


def openai_tools(functions: list[dict]) -> list[dict]:
    """A question's functions as BFCL's OpenAI-compatible handler sends them (``tools``)."""
    return convert_to_tool(functions, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)


class _FunctionCallingDecoder:
    """BFCL's OpenAI handler in function-calling mode, of which only the decoding is used (so no API
    client is built): ``decode_ast`` turns ``[{name: arguments JSON}]`` into ``[{name: {args}}]`` and
    raises on anything else (a plain-text answer)."""

    is_fc_model = True
    decode_ast = OpenAICompletionsHandler.decode_ast


_DECODER = _FunctionCallingDecoder()


def check(entry: dict, category: str, model_result: Any, possible_answer: list | None) -> dict:
    """BFCL's verdict on one entry: ``{"valid": bool, "error_type"?: str, "error"?: [...]}``.

    ``model_result`` is what BFCL's OpenAI handler records for a response: the list
    ``[{name: arguments JSON text}]`` of its ``tool_calls``, or the message's content when it has none.
    """
    if "irrelevance" in category:
        return eval_runner._evaluate_single_relevance_entry(
            _DECODER, entry["id"], model_result, entry, HARNESS, category)
    return eval_runner._evaluate_single_ast_entry(
        _DECODER, entry["id"], model_result, possible_answer, entry, HARNESS, category,
        Language.PYTHON, ReturnFormat.PYTHON)
