"""The model folder routes of ``engines.model_files``, the download over real HTTP on 127.0.0.1.

The served model is made here: a tiny ONNX graph (an embedding table looked up by token id, so
tokens → "last hidden state") and a word-level tokenizer.json, a few kB in all. The pins the
download checks are this model's, so the code under test is the one a user runs, against a
server that can also lie (wrong bytes) or fail (HTTP errors).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from crowdsift.core.config import Settings
from crowdsift.core.errors import ModelDownloadError, ModelUnavailableError
from crowdsift.engines import embedding
from crowdsift.engines import model_files as routes
from crowdsift.engines.embedding import MiniLMEmbedder
from crowdsift.engines.model_files import PublishedFile, download_model, is_model_folder
from crowdsift.engines.onnx_embedder import OnnxEmbedder
from tests.support.local_http import LocalHTTPServer, Reply

onnx = pytest.importorskip("onnx")
WORDS = ("[UNK]", "[PAD]", "plaud", "note", "phone", "recording", "app", "worth", "it", "is")
WIDTH = 8


def tiny_graph() -> bytes:
    """input_ids, attention_mask, token_type_ids → last_hidden_state [batch, tokens, WIDTH]."""
    from onnx import TensorProto, helper, numpy_helper

    table = np.random.default_rng(7).normal(size=(len(WORDS), WIDTH)).astype(np.float32)
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", WIDTH]
    )
    node = helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)
    graph = helper.make_graph(
        [node], "tiny", inputs, [output], initializer=[numpy_helper.from_array(table, "table")]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


def tiny_tokenizer() -> bytes:
    from tokenizers import Tokenizer, models, pre_tokenizers

    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer.to_str().encode()


@dataclass
class ModelServer:
    """Serves ``files`` (URL path → bytes) under /model; ``status`` overrides every answer."""

    files: dict[str, bytes]
    status: int = 200
    requests: list[str] = field(default_factory=list)

    def respond(self, _method: str, target: str, _headers: dict[str, str], _body: bytes) -> Reply:
        self.requests.append(target)
        if self.status != 200:
            return Reply(self.status, b"nope")
        content = self.files.get(target.removeprefix("/model/"))
        return Reply(404, b"not found") if content is None else Reply(200, content)


@pytest.fixture(scope="module")
def tiny_files() -> dict[str, bytes]:
    return {"onnx/model.onnx": tiny_graph(), "tokenizer.json": tiny_tokenizer()}


@pytest.fixture
def pins(tiny_files: dict[str, bytes]) -> tuple[PublishedFile, ...]:
    return tuple(
        PublishedFile(name, path, hashlib.sha256(data).hexdigest(), len(data))
        for name, path, data in (
            ("model.onnx", "onnx/model.onnx", tiny_files["onnx/model.onnx"]),
            ("tokenizer.json", "tokenizer.json", tiny_files["tokenizer.json"]),
        )
    )


@pytest.fixture
def served(tiny_files: dict[str, bytes]) -> Iterator[tuple[ModelServer, str]]:
    responder = ModelServer(dict(tiny_files))
    server = LocalHTTPServer(responder, name="model-server")
    server.start()
    try:
        yield responder, f"{server.base_url}/model"
    finally:
        server.stop()


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir()) if parent.exists() else []


def test_a_download_lands_as_a_model_folder_that_embeds(
    served: tuple[ModelServer, str], pins: tuple[PublishedFile, ...], tmp_path: Path
) -> None:
    _, url = served
    seen: list[tuple[str, int, int]] = []
    folder = download_model(
        tmp_path / "models" / "mini",
        base_url=url,
        files=pins,
        progress=lambda *a: seen.append(a),
    )
    assert is_model_folder(folder)
    assert leftovers(tmp_path / "models") == ["mini"]  # no staging folder stays behind
    assert {name for name, _, _ in seen} == {"model.onnx", "tokenizer.json"}
    assert all(done <= total for _, done, total in seen)
    embedder = OnnxEmbedder.from_folder(folder, name="tiny")
    vectors = embedder.embed(["is the plaud note worth it", "phone recording app", ""])
    assert vectors.shape == (3, WIDTH)
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-5)
    assert embedder.identity == f"onnx:{pins[0].sha256}"


def test_a_file_whose_checksum_differs_is_refused_and_nothing_is_kept(
    served: tuple[ModelServer, str], pins: tuple[PublishedFile, ...], tmp_path: Path
) -> None:
    responder, url = served
    graph = bytearray(responder.files["onnx/model.onnx"])
    graph[-1] ^= 0xFF  # same size, other bytes
    responder.files["onnx/model.onnx"] = bytes(graph)
    with pytest.raises(ModelDownloadError, match=r"model\.onnx .* not the expected file") as info:
        download_model(tmp_path / "models" / "mini", base_url=url, files=pins)
    assert "SHA-256" in str(info.value) and "nothing was kept" in str(info.value)
    assert leftovers(tmp_path / "models") == []


def test_a_file_of_another_size_is_refused(
    served: tuple[ModelServer, str], pins: tuple[PublishedFile, ...], tmp_path: Path
) -> None:
    responder, url = served
    responder.files["tokenizer.json"] += b" "
    with pytest.raises(ModelDownloadError, match=r"tokenizer\.json"):
        download_model(tmp_path / "models" / "mini", base_url=url, files=pins)
    assert leftovers(tmp_path / "models") == []


@pytest.mark.parametrize("status", [404, 503])
def test_an_http_error_is_a_clear_error_naming_status_and_url(
    served: tuple[ModelServer, str],
    pins: tuple[PublishedFile, ...],
    tmp_path: Path,
    status: int,
) -> None:
    responder, url = served
    responder.status = status
    with pytest.raises(ModelDownloadError) as info:
        download_model(tmp_path / "models" / "mini", base_url=url, files=pins)
    message = str(info.value)
    assert f"HTTP {status}" in message and f"{url}/onnx/model.onnx" in message
    assert "CROWDSIFT_EMBEDDING_MODEL" in message
    assert leftovers(tmp_path / "models") == []


def test_an_unreachable_server_is_a_clear_error(
    pins: tuple[PublishedFile, ...], tmp_path: Path, dead_port: int
) -> None:
    with pytest.raises(ModelDownloadError, match="ConnectError"):
        download_model(
            tmp_path / "models" / "mini", base_url=f"http://127.0.0.1:{dead_port}", files=pins
        )
    assert leftovers(tmp_path / "models") == []


@pytest.fixture
def no_installed_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No install-time folder, no packaged model, the user cache under tmp_path."""
    monkeypatch.setattr(routes, "installed_dir", lambda: tmp_path / "venv-share" / "mini")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(embedding, "has_module", lambda _name: False)
    monkeypatch.setattr(embedding, "_SHARED", {})
    return tmp_path / "cache"


def test_the_local_engine_downloads_once_then_finds_the_cache(
    served: tuple[ModelServer, str],
    pins: tuple[PublishedFile, ...],
    no_installed_model: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    responder, url = served
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("CROWDSIFT_EMBEDDING_DOWNLOAD_URL", url)
    monkeypatch.setattr(routes, "PUBLISHED", pins)
    first = MiniLMEmbedder.from_settings(Settings())
    assert first.embed(["plaud note"]).shape == (1, WIDTH)
    assert routes.download_dir().is_relative_to(no_installed_model)
    assert is_model_folder(routes.download_dir())
    fetched = len(responder.requests)
    monkeypatch.setattr(embedding, "_SHARED", {})
    again = MiniLMEmbedder.from_settings(Settings())
    assert again.embed(["phone app"]).shape == (1, WIDTH)
    assert len(responder.requests) == fetched  # the second process finds the cache


def test_offline_without_a_model_exits_with_the_two_ways(
    no_installed_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError) as info:
        MiniLMEmbedder.from_settings(Settings()).embed(["anything"])
    message = str(info.value)
    assert "CROWDSIFT_EMBEDDING_MODEL" in message and "model.onnx" in message
    assert "HF_HUB_OFFLINE" in message and "download" in message


def test_crowdsift_embedding_model_names_a_folder_used_as_it_is(
    served: tuple[ModelServer, str],
    pins: tuple[PublishedFile, ...],
    no_installed_model: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    responder, url = served
    folder = download_model(tmp_path / "mine", base_url=url, files=pins)
    (folder / routes.INFO).unlink()  # a folder the user made: no crowdsift-model.json
    before = len(responder.requests)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("CROWDSIFT_EMBEDDING_MODEL", str(folder))
    embedder = MiniLMEmbedder.from_settings(Settings())
    assert embedder.embed(["worth it"]).shape == (1, WIDTH)
    assert embedder.runtime == "onnxruntime"
    assert embedder.identity.startswith("onnx-folder:")
    assert len(responder.requests) == before


def test_the_default_download_url_is_the_pinned_revision() -> None:
    assert Settings().embedding_download_url == routes.DEFAULT_DOWNLOAD_URL
    assert routes.REVISION in routes.DEFAULT_DOWNLOAD_URL
    assert {f.name for f in routes.PUBLISHED} == {"model.onnx", "tokenizer.json"}
