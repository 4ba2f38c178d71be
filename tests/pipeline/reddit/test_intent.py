"""Intent, building-vs-using AI, temporal class, compared options, architecture-term stripping."""

from __future__ import annotations

import pytest

from crowdsift.pipeline.reddit.intent import (
    ARCHITECTURE_TERMS,
    classify_ai_mode,
    classify_intent,
    classify_temporal,
    compared_options,
    strip_architecture_terms,
    time_filter_for,
)


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        # comparison: explicit markers
        ("Airflow vs Dagster for a small team", "comparison"),
        ("Airflow vs. Dagster", "comparison"),
        ("Airflow versus Dagster", "comparison"),
        ("How does Obsidian compare to Notion?", "comparison"),
        ("Is the Plaud Note better than Otter?", "comparison"),
        ("What is the difference between TCP and UDP?", "comparison"),
        # comparison: a choice between options
        ("Should I learn Rust or Go?", "comparison"),
        ("Airflow, Dagster or Prefect?", "comparison"),
        ("How to choose between Proxmox and ESXi", "comparison"),
        # troubleshooting, one rule each
        ("Docker compose error on startup", "troubleshooting"),
        ("How to fix a squeaky floor", "troubleshooting"),
        ("Wifi not working after sleep", "troubleshooting"),
        ("pip install fails on macOS", "troubleshooting"),
        ("Why does my Proxmox VM crash at night", "troubleshooting"),
        ("my drill chuck is broken", "troubleshooting"),
        ("issue with nginx reverse proxy headers", "troubleshooting"),
        ("Why won't my laptop charge", "troubleshooting"),
        # how-to, one rule each
        ("How to brew espresso at home", "how_to"),
        ("How do I set up Home Assistant on a Raspberry Pi?", "how_to"),
        ("Beginner guide to sourdough", "how_to"),
        ("Home Assistant setup for a small flat", "how_to"),
        ("Installing Arch on a ThinkPad", "how_to"),
        ("configure nginx as a reverse proxy", "how_to"),
        ("best way to learn Japanese", "how_to"),
        # general
        ("Is the Plaud Note worth it?", "general"),
        ("What mechanical keyboard do you use for programming", "general"),
    ],
)
def test_classify_intent(question: str, intent: str) -> None:
    assert classify_intent(question) == intent


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        # explicit comparison beats a troubleshooting word
        ("Postgres vs MySQL: which has fewer replication errors?", "comparison"),
        # troubleshooting beats a choice of options: it is still a problem to fix
        ("App crashes on Postgres or MySQL", "troubleshooting"),
        # a choice of options beats how-to wording
        ("Best way to host a blog: VPS or PaaS?", "comparison"),
        # "install or configure" is not a choice between options
        ("How do I install or configure nginx", "how_to"),
        # "X or not" compares nothing
        ("Is it worth it or not?", "general"),
        ("Should I buy now or wait?", "general"),
    ],
)
def test_intent_precedence(question: str, intent: str) -> None:
    assert classify_intent(question) == intent


@pytest.mark.parametrize(
    ("question", "options"),
    [
        ("Airflow vs Dagster in 2026", ["airflow", "dagster"]),
        (
            "Is the Plaud Note worth it compared to a phone recording app?",
            ["plaud note", "phone recording app"],
        ),
        ("Should I learn Rust or Go?", ["rust", "go"]),
        ("Is Home Assistant or openHAB better for Zigbee?", ["home assistant", "openhab"]),
        ("Airflow, Dagster or Prefect for a small team?", ["airflow", "dagster", "prefect"]),
        ("For a small team, Airflow or Dagster?", ["airflow", "dagster"]),
        ("Should I use Dagster or stick with Airflow?", ["dagster", "airflow"]),
        ("Compare the Plaud Note and Otter for meetings", ["plaud note", "otter"]),
        ("What is the difference between TCP and UDP?", ["tcp", "udp"]),
        ("Is the Plaud Note better than Otter for meetings?", ["plaud note", "otter"]),
        ("iPhone 15 versus Pixel 8", ["iphone 15", "pixel 8"]),
        (
            "Postgres vs MySQL vs SQLite vs DuckDB vs Redis",
            ["postgres", "mysql", "sqlite", "duckdb"],
        ),
        ("Is the Plaud Note worth it?", []),
        ("Is it worth it or not?", []),
        ("how do I install or configure nginx", []),
    ],
)
def test_compared_options(question: str, options: list[str]) -> None:
    assert compared_options(question) == options


@pytest.mark.parametrize(
    ("question", "mode"),
    [
        ("Best vector database for a RAG chatbot", "building_ai"),
        ("How do I fine-tune Llama on my support tickets?", "building_ai"),
        ("Chunking strategy for embeddings of long PDFs", "building_ai"),
        ("How to build an agent that books meetings", "building_ai"),
        ("Which inference server for a 70B model?", "building_ai"),
        ("train a model to classify invoices", "building_ai"),
        ("How can I give Copilot access to our internal docs?", "using_ai"),
        ("Is ChatGPT good for writing SQL?", "using_ai"),
        ("Cursor or Claude for refactoring a monorepo", "using_ai"),
        ("best AI tools for note taking", "using_ai"),
        ("prompt tips for better summaries", "using_ai"),
        ("use AI to write unit tests", "using_ai"),
        # both vocabularies: building wins only when the question is about building
        ("how to use ChatGPT with a vector database", "using_ai"),
        ("How do I build a RAG chatbot with Claude?", "building_ai"),
        # no AI at all (a mouse cursor is not Cursor, a command prompt is not prompting)
        ("my mouse cursor disappears on Ubuntu", "none"),
        ("change the command prompt colour", "none"),
        ("Best impact driver for deck screws", "none"),
    ],
)
def test_classify_ai_mode(question: str, mode: str) -> None:
    assert classify_ai_mode(question) == mode


@pytest.mark.parametrize(
    "question",
    [
        "Which local LLM runs on 8 GB?",
        "is AI going to replace junior devs",
        "latest firmware for the Plaud Note",
        "new features in Proxmox",
        "best NAS in 2026",
        "Home Assistant 2025.1 release notes",
        "which model of Kindle",
        "tech news this week",
        "Python version churn is exhausting",
    ],
)
def test_fast_moving_topics(question: str) -> None:
    assert classify_temporal(question, "none") == "fast_moving"


def test_evergreen_topics_and_ai_mode_forces_fast_moving() -> None:
    assert classify_temporal("How to sharpen a chisel", "none") == "evergreen"
    assert classify_temporal("The difference between TCP and UDP", "none") == "evergreen"
    assert classify_temporal("How to sharpen a chisel", "using_ai") == "fast_moving"
    assert classify_temporal("How to sharpen a chisel", "building_ai") == "fast_moving"


def test_time_filter_for() -> None:
    assert time_filter_for("fast_moving") == "month"
    assert time_filter_for("evergreen") == "all"


def test_architecture_terms_are_listed_lower_case() -> None:
    for term in ("vector db", "vector database", "rag", "embedding", "pinecone", "langchain"):
        assert term in ARCHITECTURE_TERMS
    assert all(term == term.lower() for term in ARCHITECTURE_TERMS)


def test_strip_removes_terms_the_question_does_not_contain() -> None:
    queries = [
        "copilot docs with RAG",
        "Copilot vector database setup",
        '"vector db" OR copilot OR Embeddings',
        "RAG",
        "Retrieval-Augmented Generation for copilot",
        "copilot pinecone langchain",
    ]
    assert strip_architecture_terms(queries, "How do I give Copilot our docs?") == [
        "copilot docs",
        "Copilot setup",
        "copilot",
    ]


def test_strip_keeps_terms_the_question_contains() -> None:
    question = "Can ChatGPT read my embeddings from a vector store?"
    queries = ["chatgpt embedding vector store", "chatgpt RAG embeddings"]
    assert strip_architecture_terms(queries, question) == [
        "chatgpt embedding vector store",
        "chatgpt embeddings",
    ]


def test_strip_keeps_words_that_only_contain_a_term() -> None:
    # "rag" inside "storage" or "drag" is not the term RAG
    assert strip_architecture_terms(["copilot storage drag and drop"], "copilot") == [
        "copilot storage drag and drop"
    ]


@pytest.mark.parametrize(
    "question",
    [
        "My PC restarts by itself when I start a game, what should I check?",  # asks a diagnosis
        "vLLM on four cards only gives me about 14 tokens a second",  # a number short of hope
        "Ollama keeps unloading my model after a few minutes",  # keeps doing it
        "Game freezes every few minutes on my new build",
        "My laptop screen flickers green after waking from sleep",
        "GPU fans spin up to 100% and the PC shuts off",
        "Wifi drops every night at 2am",
        "llama.cpp is much slower than ollama on the same model",
        "My new SSD is not showing up in the BIOS",
    ],
)
def test_a_symptom_or_a_request_for_a_diagnosis_is_troubleshooting(question: str) -> None:
    assert classify_intent(question) == "troubleshooting"


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("How do I restart the Home Assistant container?", "how_to"),  # no symptom
        ("What should I look for in a mini PC for local LLMs?", "general"),  # not a diagnosis
        ("Is the Plaud Note worth it compared to a phone?", "comparison"),
    ],
)
def test_an_action_or_a_purchase_is_not_a_symptom(question: str, intent: str) -> None:
    assert classify_intent(question) == intent
