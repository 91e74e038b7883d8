"""The language model the studio is configured with (suggestions, and the wording of a found fix)."""

from __future__ import annotations

from django.conf import settings

from routing_core import LlmScorerSettings
from routing_core.scorers.llm import ChatClient


def llm_client() -> ChatClient | None:
    """The configured endpoint, or None when the studio has none."""
    base_url, model = settings.STUDIO_LLM_BASE_URL, settings.STUDIO_LLM_MODEL
    if not base_url or not model:
        return None
    return ChatClient(
        LlmScorerSettings(
            kind="llm",
            base_url=base_url,
            model=model,
            api_key_env=settings.STUDIO_LLM_API_KEY_ENV or None,
            timeout_s=min(120.0, max(1.0, float(settings.STUDIO_LLM_TIMEOUT_S))),
            max_output_tokens=256,
        )
    )


def setup_help(feature: str) -> str:
    """What a person tells whoever runs the studio when `feature` ("Suggestions") needs a model."""
    return (
        f"{feature} need a language model. Ask whoever runs the studio to set "
        "STUDIO_LLM_BASE_URL (an OpenAI-compatible address, e.g. https://api.openai.com/v1) and "
        "STUDIO_LLM_MODEL, and to put the key in the variable STUDIO_LLM_API_KEY."
    )
