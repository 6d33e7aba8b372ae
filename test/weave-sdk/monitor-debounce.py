"""Debounced monitors (scorer_debounce_config): one per thread scoring the last message, one
per trace scoring all of them. Usage: monitor-debounce.py setup | thread <name> <q>… | trace <q>…
(`setup` activates both monitors). Prints one JSON line: the ids of the calls made."""
import json
import os
import sys
import types

import weave

# As monitor.py: the scorer's module loads without weave[scorers]'s optional dependencies.
pkg = types.ModuleType("weave.scorers")
pkg.__path__ = [os.path.join(os.path.dirname(weave.__file__), "scorers")]
sys.modules["weave.scorers"] = pkg
from weave.flow.llm_structured_model import LLMStructuredCompletionModel  # noqa: E402
from weave.scorers.llm_as_a_judge_scorer import LLMAsAJudgeScorer  # noqa: E402

client = weave.init(os.environ["WEFT_PROJECT"])


@weave.op
def reply(q: str) -> str:
    return f"reply to {q}"


@weave.op
def step(q: str) -> str:
    return f"step {q}"


@weave.op
def session(qs: list) -> list:
    return [step(q) for q in qs]


mode, args = sys.argv[1], sys.argv[2:]
out = {}
if mode == "setup":
    def judge(name, prompt):
        return LLMAsAJudgeScorer(
            name=name,
            model=LLMStructuredCompletionModel(
                llm_model_id=os.environ["JUDGE_MODEL"],
                default_params={"response_format": "json_object", "messages_template": [{"role": "system", "content": "You grade answers."}]},
            ),
            scoring_prompt=prompt,
        )

    weave.Monitor(
        name="per-thread",
        op_names=["reply"],
        scorers=[judge("thread_judge", "Thread last: {output} (to: {q})")],
        scorer_debounce_config={"aggregation_field": "thread_id", "aggregation_method": "last_message", "timeout_seconds": 1.5},
    ).activate()
    weave.Monitor(
        name="per-trace",
        op_names=["step"],
        scorers=[judge("trace_judge", "Trace all: {output}")],
        scorer_debounce_config={"aggregation_field": "trace_id", "aggregation_method": "all_messages", "timeout_seconds": 1.5},
    ).activate()
elif mode == "thread":
    ids = []
    with weave.thread(args[0]):
        for q in args[1:]:
            _, call = reply.call(q)
            ids.append(call.id)
    out["calls"] = ids
elif mode == "trace":
    _, call = session.call(args)
    out["root"] = call.id
client.flush()
print(json.dumps(out))
