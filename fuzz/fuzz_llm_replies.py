"""Fuzz target: an LLM's reply text through ``parse_reply`` for every Task in crowdsift.

The first byte picks the task (``reply_tasks``), the rest is the reply as the model's text.
Findings: anything but an ``EngineOutputError`` escaping (models send fences, prose, cut-off
JSON, wrong shapes, NaN, huge numbers, deep nesting), or an output of another type.

    python fuzz/fuzz_llm_replies.py fuzz/corpus/llm_replies -max_total_time=30
"""

from __future__ import annotations

import contextlib
import sys

if __name__ == "__main__":
    import atheris

    _imports = atheris.instrument_imports(include=["crowdsift", "harness"])
else:  # imported by the tests: no atheris needed, nothing to instrument
    _imports = contextlib.nullcontext()

with _imports:
    from crowdsift.engines.json_reply import parse_reply
    from harness import quiet_logs, reply_tasks, text_of, typed

TASKS = sorted(reply_tasks().items())


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    _name, task = TASKS[data[0] % len(TASKS)]
    output = typed(parse_reply, task, text_of(data[1:]))
    if output is not None:
        assert isinstance(output, task.output_model)


if __name__ == "__main__":
    quiet_logs()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
