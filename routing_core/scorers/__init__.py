"""Scorers: tier 2's one-score-per-route judges, behind one protocol
(docs/pack-format.md, Tier 2: scores).

`build_tiers` turns the pack's scorer settings into the cascade's tiers (one tier unless the
pack names a cascade); optional scorers are imported only when a pack names them, so
`import routing_core` needs neither sentence-transformers nor anything for the LLM.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from routing_core.errors import PackError
from routing_core.pack import (
    CascadeScorerSettings,
    EmbeddingScorerSettings,
    HybridScorerSettings,
    LexicalScorerSettings,
    LlmScorerSettings,
    Pack,
)
from routing_core.scorers.base import (
    RouteText,
    Scorer,
    ScorerFailure,
    ScorerInfo,
    Term,
    Tier,
    route_texts,
)

if TYPE_CHECKING:
    from routing_core.scorers.llm import LlmDecider

__all__ = [
    "RouteText",
    "Scorer",
    "ScorerFailure",
    "ScorerInfo",
    "Term",
    "Tier",
    "build_decider",
    "build_scorer",
    "build_tiers",
    "route_texts",
]

TierSettings = (
    LexicalScorerSettings | EmbeddingScorerSettings | HybridScorerSettings | LlmScorerSettings
)


def build_scorer(pack: Pack, settings: TierSettings | None = None) -> Scorer:
    """The scorer the settings name (the pack's own when None; a cascade's first tier).

    Raises:
        PackError: the scorer needs an optional extra that is not installed.
    """
    chosen = settings or pack.scorer
    if isinstance(chosen, CascadeScorerSettings):
        chosen = chosen.tiers[0]
    return _build(route_texts(pack), chosen, "scorer", pack.out_of_scope, not pack.no_background)


def build_tiers(pack: Pack) -> tuple[Tier, ...]:
    """The cascade's tiers, cheapest first (one tier unless the pack names a cascade).

    Raises:
        PackError: a tier needs an optional extra that is not installed.
    """
    settings = pack.scorer
    if not isinstance(settings, CascadeScorerSettings):
        located: list[tuple[str, TierSettings]] = [("scorer", settings)]
    else:
        located = [(f"scorer.tiers[{i}]", t) for i, t in enumerate(settings.tiers)]
    texts = route_texts(pack)
    tiers: list[Tier] = []
    for where, s in located:
        scorer = _build(texts, s, where, pack.out_of_scope, not pack.no_background)
        takes = getattr(scorer, "is_foreign", None) if getattr(s, "take_foreign", False) else None
        tiers.append(
            Tier(scorer, getattr(s, "floor", None), getattr(s, "near_tie_margin", None), takes)
        )
    return tuple(tiers)


def build_decider(pack: Pack) -> LlmDecider | None:
    """The tier-3 menu decider the pack's cascade names, or None."""
    settings = pack.scorer
    if not isinstance(settings, CascadeScorerSettings) or settings.decider is None:
        return None
    from routing_core.scorers.llm import LlmDecider

    return LlmDecider.build(route_texts(pack), settings.decider)


def _build(
    texts: list[RouteText],
    settings: TierSettings,
    where: str,
    out_of_scope: Sequence[str] = (),
    background: bool = True,
) -> Scorer:
    """`background`: whether a lexical scorer (or half) may learn the built-in background."""
    if isinstance(settings, LlmScorerSettings):
        from routing_core.scorers.llm import LlmScorer

        return LlmScorer.build(texts, settings)
    if isinstance(settings, EmbeddingScorerSettings | HybridScorerSettings):
        return _build_embedding(texts, settings, where, out_of_scope, background)
    from routing_core.scorers.lexical import LexicalScorer

    return LexicalScorer.build(texts, settings.model, out_of_scope, background)


def _build_embedding(
    texts: list[RouteText],
    settings: EmbeddingScorerSettings | HybridScorerSettings,
    where: str,
    out_of_scope: Sequence[str] = (),
    background: bool = True,
) -> Scorer:
    from routing_core.scorers.embedding import (
        COSINES_ABROAD_MODELS,
        MULTILINGUAL_MODELS,
        EmbeddingScorer,
        HybridScorer,
        MissingExtra,
        load_encoder,
    )

    try:
        encoder = load_encoder(settings.model)
    except MissingExtra as exc:
        raise PackError([(where, str(exc))]) from None
    embedding = EmbeddingScorer.build(
        texts,
        encoder,
        settings.aggregate,
        out_of_scope,
        settings.head,
        cosines_abroad=settings.model in COSINES_ABROAD_MODELS,
    )
    if isinstance(settings, EmbeddingScorerSettings):
        return embedding
    return HybridScorer.build(
        texts,
        embedding,
        settings.embedding_weight,
        out_of_scope,
        settings.fit_weight,
        background=background,
        multilingual=settings.model in MULTILINGUAL_MODELS,
    )
