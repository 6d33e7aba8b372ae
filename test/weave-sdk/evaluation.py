"""Publishes what a server-side evaluation runs: an Evaluation (a Dataset of questions, an LLM
judge and a JSON check) and two LLMStructuredCompletionModels, one served by the upstreams and
one that is not. Prints one JSON line with their refs."""
import json
import os
import sys
import types

import weave

# weave.scorers' __init__ imports every scorer's optional dependencies (the `weave[scorers]`
# extra); the two used here need none: their modules load without it.
pkg = types.ModuleType("weave.scorers")
pkg.__path__ = [os.path.join(os.path.dirname(weave.__file__), "scorers")]
sys.modules["weave.scorers"] = pkg
from weave.flow.llm_structured_model import LLMStructuredCompletionModel  # noqa: E402
from weave.scorers.json_scorer import ValidJSONScorer  # noqa: E402
from weave.scorers.llm_as_a_judge_scorer import LLMAsAJudgeScorer  # noqa: E402

client = weave.init(os.environ["WEFT_PROJECT"])
if len(sys.argv) > 2 and sys.argv[1] == "read":
    # Read a finished server-side run back as any evaluation: found by the Evaluation's own
    # get_evaluate_calls(), its children through the SDK.
    evaluation = weave.ref(sys.argv[2]).get()
    root = client.get_call(sys.argv[3])
    children = list(root.children())
    print(json.dumps({
        "evaluate_calls": [c.id for c in evaluation.get_evaluate_calls()],
        "output": root.output,
        "children": [c.op_name.split("/")[-1].split(":")[0] for c in children],
    }, default=str))
    sys.exit(0)
questions = ["paris", "rome", "rude", "json", "berlin"]
dataset = weave.Dataset(name="capitals", rows=[{"q": q, "expected": q.upper()} for q in questions])
judge = LLMAsAJudgeScorer(
    name="helpful",
    model=LLMStructuredCompletionModel(
        llm_model_id=os.environ["JUDGE_MODEL"],
        default_params={"response_format": "json_object", "messages_template": [{"role": "system", "content": "You grade answers."}]},
    ),
    scoring_prompt="Grade: {output} (question: {q}, expected: {expected})",
)
evaluation = weave.Evaluation(name="capitals-eval", dataset=dataset, scorers=[judge, ValidJSONScorer()])
template = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Question: {q}"}]
model = LLMStructuredCompletionModel(
    name="answerer", llm_model_id=os.environ["ANSWER_MODEL"], default_params={"response_format": "text", "messages_template": template}
)
unserved = LLMStructuredCompletionModel(
    name="nowhere", llm_model_id="nobody-serves-this", default_params={"response_format": "text", "messages_template": template}
)
refs = {name: weave.publish(obj).uri() for name, obj in [("evaluation", evaluation), ("model", model), ("unserved", unserved), ("dataset", dataset)]}
print(json.dumps(refs))
