# ruff: noqa: E501
"""Theme 2: AI coding assistants, local models and RAG (r/ChatGPTCoding, r/LocalLLaMA, r/Rag).

Sample text written for the demo; opinions and numbers are invented but plausible.
"""

from __future__ import annotations

from demo_content.model import Theme, Topic
from demo_content.rag import CHUNKING, EVALS, VECTORS

EDITORS = Topic(
    key="cursor_vs_copilot",
    subreddits=("ChatGPTCoding",),
    titles=(
        "Cursor vs GitHub Copilot after a month of using both",
        "Is Cursor worth $20/month if my company already pays for Copilot?",
        "Has Copilot Chat finally caught up with Cursor?",
        "Switched back from Cursor to VS Code + Copilot, here's why",
        "Cursor's tab completion is scary good, anyone else?",
        "Which AI code editor for a large monorepo (2M+ lines)?",
        "Cursor or Copilot for Python data work in {year}?",
        "Copilot agent mode vs Cursor agent for multi-file edits",
        "My team is split between Cursor and Copilot, how do you standardize?",
        "Honest take: AI autocomplete is making me a worse programmer",
        "Cursor vs Copilot for a junior dev: which teaches better habits?",
    ),
    contexts=(
        "I'm a backend dev, mostly Python and Go, working in a ~400k line monorepo.",
        "Our company pays for Copilot Business, but half the team uses Cursor on personal cards.",
        "I've used Copilot since the 2022 preview and just finished a 30 day Cursor trial.",
        "Mostly TypeScript/React front-end work with a lot of repetitive component boilerplate.",
        "Data scientist: notebooks, pandas, a bit of SQL, and the occasional FastAPI service.",
    ),
    questions={
        "Which model were you using in Copilot Chat?": (
            "Whatever the default was; I didn't switch models.",
            "A Claude model, after the default kept giving me shallow answers.",
        ),
        "How big is the repo?": (
            "About 400k lines, mostly Python.",
            "Small, maybe 30k lines of TypeScript.",
        ),
        "Do you have a rules file set up?": (
            "Not yet, that's next on my list.",
            "Yes, about 40 lines: test framework, naming, and 'never touch the migrations folder'.",
        ),
    },
    asks=(
        "What's your experience with both?",
        "For those who switched, did you stay?",
        "Is the difference worth paying for both?",
        "What would you standardize on?",
    ),
    facts=(
        "They're converging. Pick the one your company will pay for and spend the time learning to write smaller, clearer tasks.",
        "Whatever you use, keep diffs small. Multi-file agent edits on a big repo still need a careful review of every hunk.",
        "Add a rules file (`.cursorrules` or `.github/copilot-instructions.md`) with your conventions: test framework, naming, error handling. Output quality jumps.",
        "Autocomplete is great for boilerplate and tests and bad at anything that depends on your domain's invariants.",
        "For notebooks both are fine. The bigger win for data work is asking for the test or the assertion, not the transformation.",
        "Try both on the same real task from your backlog, not a demo. The differences show up in the boring stuff: renames, test updates, small refactors.",
        "Turn autocomplete off in files where you need to think, like migrations and auth code, and use chat there instead.",
        "Whichever you pick, the review burden moves to you. Read every line like it came from an eager intern.",
    ),
    side_a=(
        "Copilot inside VS Code just works with our enterprise SSO, policy controls and the public-code filter. That alone ended the Cursor discussion at my company.",
        "Copilot Chat got much better once it offered model choice. With a Claude model in Copilot Chat I don't miss Cursor.",
        "I prefer Copilot because it stays out of the way. Cursor kept trying to rewrite 40 lines when I wanted 3.",
        "Copilot is $10/month personal and works in JetBrains too. Cursor locks you into a VS Code fork.",
        "Copilot's code review on PRs caught two real bugs for us last month. That feature alone justifies the seat.",
        "Copilot's completions in JetBrains IDEs are the main reason our Java team stayed. Cursor wasn't an option without giving up IntelliJ.",
    ),
    side_b=(
        "Cursor's tab model predicts the next edit, not just the next line. After renaming a parameter it jumps to every call site, and that alone is worth the $20.",
        "Cursor's codebase indexing is the difference. Asking '@codebase where do we validate webhooks' returns the right three files.",
        "Cursor's agent handled a 5-file refactor with tests in one go. Copilot's equivalent felt a generation behind when I compared them.",
        "I switched to Cursor in 2024 and my whole team followed within two months. Nobody went back.",
        "Cursor's inline diff review is the best UX of any of these tools. Accept or reject per hunk, with the whole file in view.",
        "Cursor's multi-line tab completions saved me the most time on repetitive test cases. I write the first one and it proposes the next five.",
    ),
    shift=True,
    counters=(
        "Hot take: neither. I use a terminal agent and a plain editor. The IDE integrations are a distraction.",
        "The productivity gains are overstated. Measure your PR cycle time before and after; ours didn't move.",
    ),
    gems=(
        "In Cursor, add `@Docs` entries for your internal libraries by pointing it at the rendered docs site. The model stopped hallucinating method names from our private SDK almost entirely.",
        "Copilot tip: open the relevant files in tabs before asking. Copilot weighs open editors heavily as context, and closing unrelated tabs improved suggestions more than any prompt trick.",
    ),
    dissent=(
        "Minority view from a staff engineer who reviews ~30 PRs a week: since the team went all-in on agent mode, PRs are bigger, tests are weaker (they assert what the code does, not what it should do) and review time doubled. The tool is fine; the workflow isn't. We now cap AI-generated PRs at 300 lines and require a human-written test first.",
    ),
)

LOCAL = Topic(
    key="local_models_coding",
    subreddits=("LocalLLaMA", "ChatGPTCoding"),
    titles=(
        "Best local model for coding on a single 24GB GPU?",
        "Qwen2.5-Coder 32B Q4_K_M vs Q5_K_M: is the difference noticeable?",
        "llama.cpp settings for code completion in VS Code via Continue",
        "Local coding assistant on an M3 Max 64GB, real tokens/s numbers",
        "Local autocomplete latency is killing me, how do you get it under 300ms?",
        "Ollama vs llama.cpp server vs vLLM for a small team",
        "Is a local 7B model actually useful for coding or just a toy?",
        "Context length vs VRAM: how much KV cache do I need for 32k?",
        "Speculative decoding with a draft model, worth setting up?",
        "Fully offline coding assistant for an air-gapped network",
        "What's your local coding stack in {year}?",
    ),
    contexts=(
        "RTX 3090 24GB, 64GB system RAM, Ubuntu 22.04.",
        "Company policy says no code leaves the network, so cloud assistants are out.",
        "Using Continue in VS Code pointed at an Ollama endpoint on my workstation.",
        "Mostly Python and some Rust; I want a local model for completion plus a chat model for refactors.",
    ),
    questions={
        "What quant?": ("Q4_K_M.", "Q5_K_M for the 14B, Q4_K_M for the 32B."),
        "Is that with the default context length?": (
            "No, 16k. The default was truncating my prompts.",
            "Yes, and now I suspect that's the problem.",
        ),
        "Which backend, llama.cpp or Ollama?": (
            "Ollama, because it was the easiest to set up.",
            "llama.cpp server directly.",
        ),
    },
    asks=(
        "What model, quant and settings are you running?",
        "What are your real-world numbers?",
        "Is it worth the hassle versus paying for a cloud tool?",
    ),
    facts=(
        "Qwen2.5-Coder-32B-Instruct at Q4_K_M fits in 24GB with ~16k context and is the best local coding model I've used at that size.",
        "For autocomplete use a small base (non-instruct) model with FIM support, like Qwen2.5-Coder-1.5B or 7B. Instruct models are worse at fill-in-the-middle.",
        "On a 3090 I get about 30 tokens/s generation on a 32B Q4 with llama.cpp and `-ngl 99`. Prompt processing is the real bottleneck for big contexts.",
        "Q5_K_M vs Q4_K_M for code: I can't tell the difference day to day, but Q3 and below falls apart on longer functions.",
        "Use `--flash-attn` and a quantized KV cache (`--cache-type-k q8_0 --cache-type-v q8_0`) in llama.cpp to roughly halve KV memory at 32k context.",
        "Older Ollama versions default to a 2048 token context (`num_ctx`). Set it higher in the Modelfile or long prompts get silently truncated.",
        "vLLM is the answer for a team: continuous batching means ten people can share one GPU box without queueing.",
        "An M3 Max 64GB runs a 32B Q4 at around 12 to 15 tokens/s with MLX. Usable for chat, too slow for completions.",
        "7B models are useful for completions and simple edits. For multi-file reasoning they lose the plot quickly.",
        "Speculative decoding with Qwen2.5-Coder-0.5B as the draft for the 32B gave me about 1.6x on code, where outputs are predictable.",
        "Set temperature to 0.1 to 0.2 for code. The 0.7 to 0.8 default in many frontends makes the model invent APIs.",
        "Keep the completion model and the chat model separate. A 1.5B or 3B for tab completion stays fast while a bigger model handles chat.",
        "On Ollama, set `OLLAMA_KEEP_ALIVE` so the model stays loaded. Reloading a 20GB model on every request kills latency.",
        "For refactors, paste only the relevant functions and their call sites. Local models degrade faster than cloud ones with long, noisy contexts.",
        "llama.cpp's server exposes an OpenAI-compatible endpoint, so most editors and tools that take a base URL work with it directly.",
    ),
    counters=(
        "Local for coding is a hobby, not a productivity win. The frontier cloud models are far ahead and cost less than your power bill.",
        "Don't bother with 32B on 24GB; the context you're left with is too small. A 14B with 32k context beats it in practice.",
    ),
    gems=(
        "In Continue, set `tabAutocompleteOptions.debounceDelay` to ~250 and `maxPromptTokens` to 1024 for the local autocomplete model. The default sends way too much context and latency spikes to 1s+ on a 3090.",
        "If you serve FIM with llama-server, pass `--ctx-size 8192 --parallel 2 --cont-batching` and point the editor at `/infill`, not `/completion`. The infill endpoint builds the FIM prompt with the model's own special tokens.",
    ),
    dissent=(
        "Unpopular here, but after 6 months of running Qwen-Coder 32B locally for my team we went back to a cloud API with a zero-retention agreement. The GPU box cost ~$4k plus a day a month of babysitting drivers, and completion acceptance was 22% vs 31% with the hosted model. Local makes sense for air-gapped work; otherwise do the math honestly.",
    ),
)

AGENTS = Topic(
    key="coding_agents",
    subreddits=("ChatGPTCoding",),
    years=(2024, 2026),
    titles=(
        "Claude Code vs Aider vs Cursor agent for real refactors",
        "How do you keep coding agents from wrecking your repo?",
        "Agentic coding costs: what are you spending per month?",
        "Letting an AI agent write tests first, then code. Anyone doing TDD with agents?",
        "Aider's repo map explained, and why it matters",
        "AI agent deleted my migration files, lessons learned",
        "Best practices for CLAUDE.md / AGENTS.md instruction files?",
        "Are terminal coding agents better than IDE ones?",
        "My workflow for shipping features with an agent in a legacy Django app",
        "Coding agents in {year}: what's actually working for you?",
    ),
    contexts=(
        "Solo dev on a ~60k line Django + React app with decent test coverage.",
        "I've been letting the agent run tests and fix failures in a loop, which works until it doesn't.",
        "Small team, 5 devs, and the CTO wants 'AI-first' everything by next quarter.",
    ),
    questions={
        "What does your instruction file look like?": (
            "Commands to run tests and lint, the folder layout, and a list of paths it must not touch.",
            "Just a paragraph about the architecture, nothing about commands.",
        ),
        "How long does your test suite take?": (
            "About 90 seconds.",
            "12 minutes, which is the problem.",
        ),
        "Which agent are you using?": ("A terminal agent, mostly.", "Cursor's agent mode."),
    },
    asks=(
        "What guardrails do you use?",
        "How do you structure the work?",
        "What's your setup?",
    ),
    facts=(
        "Always work on a branch and commit before every agent run. `git diff` is your review tool and `git reset --hard` is your undo button.",
        "Give the agent a way to verify itself: one `make test` command that runs in under a minute. Agents with a fast feedback loop are dramatically better.",
        "Write the plan first. Ask the agent for a numbered plan, edit it yourself, then let it implement one step at a time.",
        "Aider's repo map sends a ranked outline of your repo's symbols with each request, which is why it copes with big repos without you adding every file.",
        "My spend on agentic tools is around $60 to $150 a month in API usage. Cheaper than it sounds for what it saves, but set hard limits.",
        "Put conventions in an instruction file (CLAUDE.md, AGENTS.md, .cursorrules): how to run tests, the lint command, folder layout, what never to touch.",
        "Don't let agents touch migrations, lockfiles or CI config without asking. Deny those paths explicitly.",
        "Small tasks win. 'Add a field + migration + serializer + test' works. 'Refactor the billing module' produces a 2,000 line diff nobody can review.",
        "Agents love to 'fix' a failing test by changing the assertion. Tell them explicitly that tests are the spec and must not be weakened.",
        "Have the agent write the test first and show it to you before the implementation. Reviewing a 20-line test is much easier than a 200-line diff.",
        "Keep a NOTES.md the agent updates with decisions and dead ends. Starting a new session from it beats re-explaining everything.",
        "When the agent goes in circles for more than two attempts, stop, reset, and rewrite the task more narrowly. Letting it keep trying just burns tokens.",
        "Pin tool versions in the instruction file. Agents happily 'upgrade' a dependency to fix one error and break three other things.",
    ),
    counters=(
        "Agents are great for greenfield and awful for legacy code with implicit invariants. I still do legacy changes by hand.",
        "Instruction files are overrated; the agent ignores half of it after 20 turns anyway.",
    ),
    gems=(
        "Run the agent in a devcontainer with no network except the package registry and the model API, and mount the repo but not your home directory. After one agent ran `rm -rf` on the wrong path, this is non-negotiable for me.",
        "Ask the agent to finish every task by printing `git diff --stat` and a one-line summary per file. If a file shows up that shouldn't be in the diff, you catch it before review instead of during.",
    ),
    dissent=(
        "I'll take the downvotes: after a quarter of measuring it on a 9-person team, agent-written features took about the same calendar time as hand-written ones once you include review and the bug fixes in the following sprint. Agents shine at tests, scaffolding and glue code. Using them for core domain logic cost us more than it saved.",
    ),
)

HARDWARE = Topic(
    key="gpu_hardware",
    subreddits=("LocalLLaMA",),
    titles=(
        "Two used 3090s or one 4090 for local LLMs?",
        "Mac Studio with 192GB for 70B models, worth it?",
        "Running 70B at Q4 on 48GB VRAM, my tokens/s",
        "Used 3090 prices are back up to $800?",
        "Power limiting GPUs for LLM inference: how low can you go?",
        "Is 16GB VRAM enough in {year}?",
        "Riser cables and PCIe bandwidth for multi-GPU inference",
    ),
    contexts=(
        "Budget is around $2,000 and I want to run 70B models at usable speed.",
        "Current card is a 12GB 3060, which handles 7B/8B fine but nothing bigger.",
    ),
    questions={
        "What PSU are you running?": ("1200W.", "850W, which I'm now nervous about."),
        "What quant and context?": ("Q4_K_M at 8k context.", "Q5 with 16k."),
        "What did you pay for the cards?": (
            "$720 and $760, both used.",
            "$800 for one, which felt steep.",
        ),
    },
    asks=(
        "What would you buy?",
        "What numbers do you get?",
    ),
    facts=(
        "Two 3090s (48GB) run a 70B at Q4_K_M at around 15 to 18 tokens/s with llama.cpp split across both cards. One 4090 can't fit it at all.",
        "VRAM is king. A used 3090 at $700 to $800 is still the best value for local LLMs.",
        "Power limit 3090s to 250 to 280W with `nvidia-smi -pl 280`. You lose maybe 5% tokens/s and save a lot of heat and noise.",
        "PCIe x4 per GPU is fine for inference with layer split. It only matters for tensor parallelism and training.",
        "The Mac is slower in tokens/s than GPUs but runs huge models quietly at 200W. For 100B+ models it's the easiest path.",
        "16GB is enough for 14B models at Q4 to Q5 with decent context. For anything more, 24GB.",
        "Prompt processing on Macs is the catch: a 20k token prompt can take a minute before the first token appears.",
        "Check your PSU. Two 3090s spike well above their rated power for milliseconds at a time, and 1000W is the sane minimum.",
        "Undervolting, not just power limiting, gets the same speed at even lower power, but it takes an afternoon of testing.",
        "For single-user chat, memory bandwidth decides tokens/s. That's why a 3090 still holds up against newer cards with less bandwidth.",
        "Blower-style cards are loud but stack well. Open-air coolers in adjacent slots choke the top card.",
    ),
    counters=(
        "Stop buying hardware. Renting a big GPU by the hour costs less than the electricity of a 2x3090 box for most hobbyists.",
        "Multi-GPU rigs are a noise, heat and power-bill problem nobody mentions in the benchmark posts. One 24GB card and a smaller model is the sane setup for most people.",
        "Macs are overhyped here. Prompt processing speed makes them painful for anything with long context, like RAG or coding.",
    ),
    gems=(
        "On a dual 3090 box without NVLink, keep llama.cpp's default `--split-mode layer`. `--split-mode row` shuffles tensors over PCIe every layer and was 30% slower for me.",
        "Check a used 3090's memory junction temperature under load (HWiNFO on Windows). Ex-mining cards often hit 105°C on the VRAM; $20 of new thermal pads dropped mine to 82°C.",
    ),
)

THEME = Theme(
    key="ai_coding",
    topics=(EDITORS, LOCAL, CHUNKING, EVALS, AGENTS, VECTORS, HARDWARE),
    questions={
        "Which model were you using for that?": (
            "A Claude model, mostly.",
            "Qwen2.5-Coder locally.",
        ),
        "Which version? This changed a lot in the last few releases.": (
            "Latest as of last week.",
            "Whatever shipped in the spring, I haven't updated.",
        ),
        "How are you measuring that?": (
            "Mostly gut feel, to be honest.",
            "Acceptance rate from the editor telemetry.",
        ),
        "What GPU is that on?": ("A single 3090.", "A 4070 Ti with 12GB."),
        "Is that for work or a side project?": ("Work.", "Side project, so no budget."),
    },
    frames=(
        "Backend dev, {n} years in.",
        "I've been using these tools daily for about {n} months.",
        "ML engineer, building RAG systems for {n} years now.",
        "Tech lead, {n} years, and I review a lot of AI-written code.",
    ),
    name_parts=(
        "tensor",
        "token",
        "prompt",
        "vector",
        "gguf",
        "quant",
        "kvcache",
        "lora",
        "embed",
        "rerank",
        "diff",
        "regex",
        "segfault",
        "monad",
        "linter",
        "async",
        "cuda",
        "ollama",
        "chunk",
        "infer",
    ),
    flairs={
        "ChatGPTCoding": ("Discussion", "Question", "Resources And Tips", "Project"),
        "LocalLLaMA": ("Question | Help", "Discussion", "Resources", "Tutorial | Guide"),
        "Rag": ("Discussion", "Q&A", "Tools & Resources"),
    },
)
