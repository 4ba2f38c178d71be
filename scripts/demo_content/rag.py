# ruff: noqa: E501
"""Theme 2, continued: RAG chunking, evaluation and vector stores. Sample text, invented."""

from __future__ import annotations

from demo_content.model import Topic

CHUNKING = Topic(
    key="rag_chunking",
    subreddits=("Rag", "LocalLLaMA", "ChatGPTCoding"),
    titles=(
        "What chunk size and overlap are you actually using in production RAG?",
        "My RAG pipeline retrieves the right doc but the wrong paragraph",
        "Semantic chunking vs fixed-size chunking, any real benchmarks?",
        "Chunking PDFs with tables is a nightmare, what works?",
        "Do I even need chunking with 1M context models?",
        "Parent-document retrieval explained like I'm five?",
        "RAG over a code repository: chunk by function or by file?",
        "Markdown header splitting vs recursive character splitter",
        "How many chunks (top_k) do you send to the LLM?",
        "Embedding model choice matters more than chunk size? My results",
    ),
    contexts=(
        "Building an internal RAG Q&A bot over ~3,000 pages of policy PDFs and Confluence exports.",
        "Currently using LangChain's RecursiveCharacterTextSplitter with `chunk_size=1000, chunk_overlap=200`.",
        "Embeddings are text-embedding-3-small stored in pgvector, `top_k=5`.",
        'Users of our RAG bot ask very specific questions ("what\'s the reimbursement limit for X?") and the answer is one sentence buried in a long doc.',
        "Current pipeline:\n\n1. PyMuPDF text extraction\n2. 800 token chunks, 100 overlap\n3. bge-small embeddings in Chroma\n4. top 4 chunks into the prompt",
    ),
    questions={
        "What's your chunk size and overlap?": (
            "1000 characters with 200 overlap, the LangChain defaults.",
            "512 tokens, 64 overlap.",
        ),
        "Are you prepending headings to the chunks?": (
            "No, just the raw text.",
            "Title only, not the section headings.",
        ),
        "Which embedding model?": ("text-embedding-3-small.", "bge-small, running locally."),
    },
    asks=(
        "What's working for you in production RAG?",
        "What would you change first?",
        "Any numbers from your own RAG evals?",
    ),
    facts=(
        "Start with 300 to 500 tokens per chunk and 10 to 15% overlap, then tune on an eval set. 1000 characters is fine for prose but too big when the answers are single facts.",
        "Chunk by structure first: headings, sections, list items. Then split oversized sections by tokens. Arbitrary cuts through a table row destroy retrieval.",
        "Prepend the document title and section heading to every chunk before embedding. It's the cheapest retrieval boost I've found.",
        "Parent-document retrieval: embed small chunks (~200 tokens) for matching, but send the surrounding parent section (~1,500 tokens) to the LLM.",
        "For PDFs with tables, convert each table to markdown, or to one row per line with the header repeated. Embedding raw PDF text of a table is useless.",
        "Semantic chunking gave us about the same recall as fixed-size-with-headers on our eval, at 5x the ingest cost. Not worth it for us.",
        "Long context doesn't remove the need for retrieval. Cost and latency scale with tokens, and models still miss facts buried in the middle of long inputs.",
        "For code, chunk by function or class using tree-sitter, and include the file path and class signature in each chunk.",
        "Send the top 20 to a reranker and keep the top 5. That single change helped us more than any chunking tweak.",
        "Store chunk ids and character offsets so answers can cite the exact passage. Users trust it far more when they can click through.",
        "Keep chunk boundaries on sentence ends. Cutting mid-sentence costs recall on exactly the kind of precise question users ask.",
        "Deduplicate near-identical chunks (boilerplate headers, legal disclaimers) before indexing, or your top 5 is the same footer five times.",
        "Record which chunking settings produced each index version. When recall drops you want to diff configs, not guess.",
        "For FAQs, one question plus its answer is a perfect chunk. Don't split them and don't merge them.",
    ),
    counters=(
        "Honestly chunk size barely matters compared to the embedding model and a reranker. Everyone obsesses over the wrong knob.",
        "Overlap is mostly cargo cult. With structure-aware chunking we set overlap to 0 and recall didn't change.",
    ),
    gems=(
        "Index each chunk twice: once as raw text and once as 3 to 5 LLM-generated questions the chunk answers. Query-to-question similarity is much higher than query-to-passage; our recall@5 went from 0.71 to 0.86.",
        "With pgvector HNSW, raise `hnsw.ef_search` from the default 40 to 100+ at query time. With a `WHERE tenant_id = ...` filter, the default silently returns fewer than k rows because the filter runs after the index scan.",
    ),
    dissent=(
        "Dissenting view: we threw out chunk tuning entirely and did BM25 over section-level passages plus a cross-encoder reranker. On our 400-question eval it beat every embedding+chunking combo we tried (hit@5 0.89 vs 0.81) and it's trivially debuggable. Vector search isn't always the first tool to reach for.",
    ),
)


EVALS = Topic(
    key="rag_eval",
    subreddits=("Rag", "LocalLLaMA"),
    titles=(
        "How are you evaluating RAG answers without hand-labeling everything?",
        "RAG chatbot confidently hallucinates when the answer isn't in the docs",
        "Hybrid search (BM25 + vectors): worth the complexity?",
        "Reranker recommendations? bge-reranker vs hosted vs cross-encoders",
        "Our RAG works in testing and falls apart with real user questions",
        "Ragas scores look great but users hate the answers",
        "How do you handle 'I don't know' in RAG?",
        "Query rewriting before retrieval: worth an extra LLM call?",
        "Citations in RAG answers: how do you stop made-up sources?",
    ),
    contexts=(
        "We launched an internal RAG docs assistant two months ago and the thumbs-down rate is around 30%.",
        "Most failures in our RAG bot are either retrieval misses or the model stitching together two unrelated chunks.",
        "Our RAG index has about 12k chunks from product docs, release notes and support tickets.",
    ),
    questions={
        "How big is your eval set?": (
            "About 80 questions, all written by the team, not real users.",
            "None yet, honestly. We go by thumbs-down.",
        ),
        "Did you try it with a reranker?": (
            "Not yet.",
            "Yes, a cross-encoder on the top 20. It helped a bit.",
        ),
        "How do you measure that?": (
            "Thumbs up/down in the UI plus a weekly manual review of 30 answers.",
            "LLM-as-judge against a reference answer.",
        ),
    },
    asks=(
        "How do you measure and fix this?",
        "What's your RAG eval setup?",
        "What actually moved the needle for you?",
    ),
    facts=(
        "Build a golden set of 100 to 200 real user questions with the expected source doc. Measure retrieval (hit@k) separately from generation; most 'hallucinations' are retrieval misses.",
        "Hybrid search is worth it. Embeddings miss exact identifiers (error codes, SKUs, function names) that BM25 nails.",
        "bge-reranker-v2-m3 running locally is good enough that we dropped the paid reranker. About 80 ms for 20 candidates on a T4.",
        "Tell the model explicitly it may answer 'not found in the provided documents', with an example. And if no chunk scores above a threshold, don't call the LLM at all.",
        "LLM-as-judge evals are fine for regression testing, but calibrate them against 50 human-graded answers first. Ours agreed with humans only 70% of the time until we rewrote the rubric.",
        "Query rewriting helps for conversational follow-ups ('what about for contractors?'). For standalone questions it mostly adds latency.",
        "Log every query, the retrieved chunk ids and the user feedback. Your best eval set is your own production traffic.",
        "Use reciprocal rank fusion (k=60) to merge BM25 and vector results. Simple and hard to beat.",
        "Check citations in code after generation: every cited id must be one of the chunks you actually sent. Drop the rest and flag the answer.",
        "Measure hit@5 and MRR on the golden set every time you change chunking, embeddings or the reranker, and put the numbers in the PR description.",
        "Keep separate 'answer not in corpus' questions in the eval set. A good system refuses those, and most don't.",
        "Look at 20 failures by hand every week. Patterns jump out that no aggregate metric will show you.",
        "Stale documents cause a surprising share of wrong answers. Store a 'last updated' date and prefer newer chunks when scores are close.",
    ),
    counters=(
        "Reranking is overkill for small corpora. Under ~10k chunks a good embedding model and `top_k=8` did just as well for us.",
        "Ragas-style automated metrics are mostly noise. We stopped looking at them.",
    ),
    gems=(
        "Add a 'citations must quote' rule: the model includes a short verbatim quote from the chunk for each claim, and you check the quote exists with a plain substring match. Cheap, deterministic, and it caught most of our hallucinations.",
        "For the keyword side of hybrid search in Postgres, use `websearch_to_tsquery` instead of `to_tsquery`. It handles quoted phrases and minus terms from users without crashing on punctuation.",
    ),
    dissent=(
        "Going against the grain: our hybrid search + reranker pipeline was slower and no better than plain vector search once we fixed our data. 60% of our 'retrieval failures' were stale or duplicated docs in the index. Clean your corpus before you add components.",
    ),
)


VECTORS = Topic(
    key="vector_db",
    subreddits=("Rag", "LocalLLaMA"),
    titles=(
        "pgvector vs Qdrant vs Chroma for a 5M chunk RAG app",
        "Do I really need a dedicated vector database?",
        "Chroma in production: anyone running it at scale?",
        "HNSW index taking forever to build in pgvector",
        "Filtering by metadata kills my vector search recall",
        "Which embedding model for multilingual docs in {year}?",
        "Embedding dimension 3072 vs 1536, noticeable difference?",
    ),
    contexts=(
        "We already run Postgres 16 for everything else.",
        "RAG app with roughly 5 million chunks, 1536-dim embeddings, 20 QPS at peak.",
        "Docs are in English, German and Russian, and users ask in all three.",
    ),
    questions={
        "How many vectors?": ("About 5 million and growing maybe 100k a week.", "Around 800k."),
        "What filters do your queries use?": (
            "tenant_id on every query, sometimes a date range.",
            "Just document type.",
        ),
        "Which pgvector version?": ("0.7.", "0.5, which I now realize is old."),
    },
    asks=(
        "What would you choose?",
        "Any gotchas before we commit?",
    ),
    facts=(
        "If you already run Postgres, start with pgvector. One less system, transactions, and joins with your metadata. Move only if you measure a problem.",
        "pgvector HNSW with `m=16, ef_construction=64` on millions of 1536-dim vectors needs a lot of RAM during the build. Raise `maintenance_work_mem` to 8GB+ or it spills to disk and takes hours.",
        "Qdrant's payload filtering is excellent: it filters during the HNSW search, so filtered queries don't lose recall.",
        "Chroma is great for prototypes and single-node apps up to a few million vectors. Beyond that we moved to Qdrant.",
        "`halfvec` in pgvector 0.7+ stores embeddings as 16-bit floats: half the storage, and the recall loss was invisible on our eval.",
        "For multilingual, bge-m3 has been solid across English, German and Russian docs for us, and it runs locally.",
        "Bigger dimensions gave us 1 to 2 points of recall. Not worth doubling storage; we truncate text-embedding-3-large to 1024 dims.",
        "Normalize your vectors and use inner product. Cosine on normalized vectors gives the same ranking and is slightly faster.",
        "Store the embedding model name and version with every vector. Mixing vectors from two models in one index silently ruins search.",
        "Benchmark with your real filters. Unfiltered ANN benchmarks say nothing about queries that filter by tenant or date.",
        "Re-embedding 5M chunks is a real cost, so settle the embedding model before you scale, not after.",
        "Chroma's persistence is just a directory, so back it up like one; Qdrant snapshots and Postgres backups are just as simple.",
    ),
    counters=(
        "Postgres is the wrong tool for 50M+ vectors; don't let the 'just use Postgres' crowd talk you into pain.",
        "Dedicated vector DBs are mostly hype at small scale. A flat numpy index searches 1M vectors in about 20ms.",
    ),
    gems=(
        "Build the pgvector HNSW index after the bulk load, not before, and set `max_parallel_maintenance_workers = 7`. Our 4M-row build went from 5 hours to 38 minutes.",
        "In Chroma, set `hnsw:space` to cosine in the collection metadata at creation time. It defaults to l2 and you can't change it later without recreating the collection.",
    ),
)
