"""A new user's monitor: an LLM judge and a JSON check on every call of `answer`, activated
with weave.Monitor(...).activate(), then calls traced. Prints one JSON line at the end."""
import json
import os
import sys
import types

import weave

# weave.scorers' __init__ imports every scorer's optional dependencies (torch, litellm…, the
# `weave[scorers]` extra); the two used here need none: their modules load without it.
pkg = types.ModuleType("weave.scorers")
pkg.__path__ = [os.path.join(os.path.dirname(weave.__file__), "scorers")]
sys.modules["weave.scorers"] = pkg
from weave.flow.llm_structured_model import LLMStructuredCompletionModel  # noqa: E402
from weave.scorers.json_scorer import ValidJSONScorer  # noqa: E402
from weave.scorers.llm_as_a_judge_scorer import LLMAsAJudgeScorer  # noqa: E402

client = weave.init(os.environ["WEFT_PROJECT"])
judge = LLMAsAJudgeScorer(
    name="helpful",
    model=LLMStructuredCompletionModel(
        llm_model_id=os.environ["JUDGE_MODEL"],
        default_params={"response_format": "json_object", "messages_template": [{"role": "system", "content": "You grade answers."}]},
    ),
    scoring_prompt="Grade this answer: {output} (to: {q})",
)
# MONITOR_INACTIVE: trace only (the monitor as published before stays as it is).
if not os.environ.get("MONITOR_INACTIVE"):
    monitor = weave.Monitor(name="helpfulness", op_names=["answer"], sampling_rate=1.0, scorers=[judge, ValidJSONScorer()])
    monitor.activate()


@weave.op
def answer(q: str) -> str:
    return '{"answer": "yes"}' if q == "json" else f"an answer to {q}"


@weave.op
def other(q: str) -> str:
    return q


calls = []
for q in sys.argv[1:]:
    _, call = answer.call(q)
    calls.append(call.id)
_, skipped = other.call("not monitored")
client.flush()
print(json.dumps({"calls": calls, "other": skipped.id}))
