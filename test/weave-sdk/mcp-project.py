# Named with a hyphen, not importable: as `mcp.py` it shadowed the `mcp` package for every
# script beside it (the Weave SDK imports `mcp` for its integration, and so ran this file).
"""A project for the MCP tools to read (test/mcp.test.ts), written by the Weave Python SDK as a user would.

Environment: WANDB_BASE_URL, WANDB_API_KEY, WEFT_PROJECT (`<entity>/<project>`). Writes: an agent
op tree (a plan, tool calls, an LLM-shaped call with usage) of which one run fails in a tool; a
thread of three turns; a Dataset of sums and two evaluations of it (one model sloppier than the
other); an AnnotationSpec. The last line is JSON naming what was written.
"""

import asyncio
import json
import os

import weave
from weave.flow.annotation_spec import AnnotationSpec

client = weave.init(os.environ["WEFT_PROJECT"])


@weave.op
def lookup(city: str) -> dict:
    if city == "Atlantis":
        raise ValueError("no weather station in Atlantis")
    return {"city": city, "temp_c": len(city) * 3}


@weave.op
def chat(prompt: str) -> dict:
    # Shaped as an LLM integration records a completion: the usage goes to the call's summary.
    return {
        "model": "gpt-test",
        "choices": [{"message": {"role": "assistant", "content": f"answer to {prompt}"}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
    }


@weave.op
def agent(question: str, cities: list) -> str:
    temps = [lookup(c) for c in cities]
    reply = chat(f"{question} {temps}")
    return reply["choices"][0]["message"]["content"]


_, ok_call = agent.call("warm?", ["Oslo", "Lima"])
try:
    agent("warm?", ["Oslo", "Atlantis"])
except ValueError:
    pass

turns = []
with weave.thread("support-42") as t:
    for q in ["hello", "where is my order?", "thanks"]:
        _, c = agent.call(q, ["Paris"])
        turns.append(c.id)
    thread_id = t.thread_id

ROWS = [
    {"question": "2 + 2", "expected": 4},
    {"question": "3 + 5", "expected": 8},
    {"question": "10 + 7", "expected": 17},
    {"question": "6 + 6", "expected": 12},
]


def add(question: str) -> int:
    a, b = (int(x) for x in question.split("+"))
    return a + b


class Careful(weave.Model):
    @weave.op
    def predict(self, question: str) -> int:
        return add(question)


class Hasty(weave.Model):
    """Off by one on 3 + 5 and 6 + 6."""

    @weave.op
    def predict(self, question: str) -> int:
        return add(question) + (1 if question in ("3 + 5", "6 + 6") else 0)


@weave.op
def exact(expected: int, output: int) -> dict:
    return {"correct": output == expected}


dataset = weave.Dataset(name="sums", rows=ROWS)
evaluation = weave.Evaluation(name="sums-eval", dataset=dataset, scorers=[exact])
asyncio.run(evaluation.evaluate(Careful(name="careful")))
asyncio.run(evaluation.evaluate(Hasty(name="hasty")))

spec_ref = weave.publish(AnnotationSpec(name="Quality", field_schema={"type": "integer", "minimum": 1, "maximum": 5}), name="quality")
client.flush()
print(
    json.dumps(
        {
            "ok_call_id": ok_call.id,
            "ok_trace_id": ok_call.trace_id,
            "thread_id": thread_id,
            "turn_ids": turns,
            "spec_ref": spec_ref.uri(),
        }
    ),
    flush=True,
)
