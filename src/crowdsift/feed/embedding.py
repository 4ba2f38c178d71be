"""Chroma's view of our embedders: an ``EmbeddingFunction`` that never touches the network.

Chroma's default embedding function downloads a model on first use and fails offline, so every
collection crowdsift opens gets this one. It is registered under the name ``crowdsift`` with a
config Chroma persists beside the collection (``{"embedder": "minilm"|"hashing", "model": ...}``),
so a collection reopened later, even without passing the function, embeds queries the same way
its documents were embedded. ``build_from_config`` refuses unknown embedders instead of guessing.
"""

from __future__ import annotations

from typing import Any, Literal

from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

from crowdsift.core.errors import ConfigError
from crowdsift.engines.embedding import Embedder, HashingEmbedder, MiniLMEmbedder

EmbedderKind = Literal["minilm", "hashing"]
EF_NAME = "crowdsift"


@register_embedding_function
class CrowdsiftEmbeddingFunction(EmbeddingFunction[Documents]):
    """Wraps a crowdsift ``Embedder`` (L2-normalised vectors, so cosine space)."""

    def __init__(
        self,
        kind: EmbedderKind = "minilm",
        *,
        model: str | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.kind: EmbedderKind = kind
        self.model = model
        self._embedder = embedder or _build(kind, model)

    def __call__(self, input: Documents) -> Embeddings:
        return list(self._embedder.embed(list(input)))

    @staticmethod
    def name() -> str:
        return EF_NAME

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        return {"embedder": self.kind, "model": self.model}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> CrowdsiftEmbeddingFunction:
        kind = config.get("embedder")
        if kind not in ("minilm", "hashing"):
            raise ConfigError(
                f"this Chroma collection was embedded with {kind!r}, which crowdsift cannot "
                "rebuild; re-index it with `crowdsift index`"
            )
        model = config.get("model")
        return CrowdsiftEmbeddingFunction(kind, model=model if isinstance(model, str) else None)

    def validate_config_update(
        self, old_config: dict[str, Any], new_config: dict[str, Any]
    ) -> None:
        if old_config.get("embedder") != new_config.get("embedder"):
            raise ConfigError(
                "a collection's embedder cannot change (its vectors would not compare); "
                "clear and re-index instead"
            )


def _build(kind: EmbedderKind, model: str | None) -> Embedder:
    if kind == "hashing":
        return HashingEmbedder()
    return MiniLMEmbedder(model)
