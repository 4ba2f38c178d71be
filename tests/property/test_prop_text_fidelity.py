"""What a post says survives cleaning and the answer: its line breaks end its sentences, and
paths, backslashes and code spans are quoted as written (issue 27, text fidelity)."""

from __future__ import annotations

from uuid import uuid4

from hypothesis import given
from hypothesis import strategies as st

from crowdsift.core.sentences import split_sentences
from crowdsift.core.text import clean_text
from crowdsift.engines.embedding import HashingEmbedder
from crowdsift.pipeline.synthesis.config import SynthesisConfig
from crowdsift.pipeline.synthesis.extractive import local_answer
from crowdsift.pipeline.synthesis.grounding import ground
from crowdsift.pipeline.synthesis.models import CommentPayload, PostPayload, SummarizeRequest
from crowdsift.pipeline.synthesis.sections import AnswerScope

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8)
_LINE = st.lists(_WORD, min_size=2, max_size=6).map(lambda words: " ".join(words).capitalize())
_SEGMENT = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", max_size=10
).filter(lambda s: s[:1].isalnum() and s[-1:].isalnum())


@given(st.lists(_LINE, min_size=2, max_size=6))
def test_each_line_typed_as_a_sentence_stays_a_sentence(lines: list[str]) -> None:
    cleaned = clean_text("\n".join(lines))
    assert cleaned == ". ".join(lines)  # each line ends with a full stop, none is lost
    assert len(split_sentences(f"{cleaned}.")) <= len(lines)
    assert clean_text(cleaned) == cleaned


@given(st.lists(_WORD, min_size=4, max_size=12))
def test_a_sentence_wrapped_mid_way_is_joined_as_one(words: list[str]) -> None:
    half = len(words) // 2
    text = " ".join(words[:half]) + "\n" + " ".join(words[half:])
    assert clean_text(text) == " ".join(words)


@given(st.lists(_SEGMENT, min_size=2, max_size=6), st.sampled_from(["", "C:\\"]))
def test_a_windows_path_survives_cleaning(segments: list[str], drive: str) -> None:
    """Segments as paths have them: they start and end with a letter or digit (a segment
    like ``_x_`` is emphasis in Markdown, on Reddit too)."""
    path = drive + "\\".join(segments)
    assert path in clean_text(f"Run {path} from a terminal.")


def _request(reply: str) -> SummarizeRequest:
    post = PostPayload(
        post_id="p1", subreddit="localllama", title="Where is the server binary after a build?",
        url="https://www.reddit.com/r/localllama/comments/p1/t/", body_excerpt="Built it, lost.",
        comments=[CommentPayload(comment_id="c1", excerpt=reply, score=12)], post_karma=3,
        num_comments=1, relevance_score=1.0,
    )  # fmt: skip
    return SummarizeRequest(
        query="Where is the llama server binary after building?", plan_id=uuid4(),
        post_payloads=[post], prompt_version="t", max_posts=12, max_comments_per_post=40,
        max_post_chars=1500, max_comment_chars=600,
    )  # fmt: skip


def test_the_local_answer_quotes_a_path_and_a_code_span_as_written() -> None:
    reply = r"Run it from ik_llama.cpp\build\bin\Release\llama-server.exe with `-ngl 99`."
    request = _request(clean_text(reply))
    draft = local_answer(request, SynthesisConfig(), HashingEmbedder(), scope=AnswerScope())
    grounded = ground(draft, request, SynthesisConfig(), engine="local")
    assert r"ik_llama.cpp\build\bin\Release\llama-server.exe" in grounded.result.summary.text
    assert "-ngl 99" in grounded.result.summary.text


def test_a_link_in_a_quoted_reply_is_kept_as_written_and_cites_nothing() -> None:
    reply = (
        "The llama server binary is where the build puts it after building; "
        "the nightly is at https://wheels.vllm.ai/nightly"
    )
    request = _request(reply)
    draft = local_answer(request, SynthesisConfig(), HashingEmbedder(), scope=AnswerScope())
    grounded = ground(draft, request, SynthesisConfig(), engine="local")
    assert "https://wheels.vllm.ai/nightly" in grounded.result.summary.text
    assert grounded.problems == [] and grounded.result.status == "ok"
    model = ground(draft, request, SynthesisConfig(), engine="openai")
    assert "wheels.vllm.ai" not in model.result.summary.marked()  # a model's link is not evidence
