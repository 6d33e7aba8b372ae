"""The Weave SDK's own HTTP client (0.54's RemoteHTTPTraceServer over its vendored server client)
driving the V2 object and evaluation APIs (test/v2-objects.test.ts): objects, a run with a
prediction and a score, lists with the SDK's query strings (repeated filters).

Environment: WANDB_BASE_URL, WANDB_API_KEY, WEFT_PROJECT. Prints one JSON object of what it read back.
"""

import json
import os

from weave.trace_server_bindings.remote_http_trace_server import RemoteHTTPTraceServer

project_id = os.environ["WEFT_PROJECT"]
server = RemoteHTTPTraceServer(os.environ["WANDB_BASE_URL"], username="api", password=os.environ["WANDB_API_KEY"])
P = {"project_id": project_id}


def dump(x):
    return x.model_dump(mode="json")


op = server.op_create({**P, "name": "sdk_op", "source_code": "def sdk_op():\n    return 1\n"})
op_read = server.op_read({**P, "object_id": op.object_id, "digest": op.digest, "eager": True})

dataset = server.dataset_create({**P, "name": "SDK Dataset", "rows": [{"q": "2+2", "a": "4"}]})
dataset_ref = f"weave:///{project_id}/object/{dataset.object_id}:{dataset.digest}"
scorer = server.scorer_create({**P, "name": "sdk_scorer", "op_source_code": "def score(output):\n    return 1.0\n"})
evaluation = server.evaluation_create({**P, "name": "sdk_eval", "dataset": dataset_ref, "scorers": [scorer.scorer]})
model = server.model_create({**P, "name": "SdkModel", "source_code": "class SdkModel: ...\n", "attributes": {"temperature": 0.5}})

run = server.evaluation_run_create({**P, "evaluation": evaluation.evaluation_ref, "model": model.model_ref})
prediction = server.prediction_create(
    {**P, "model": model.model_ref, "inputs": {"q": "2+2"}, "output": "4", "evaluation_run_id": run.evaluation_run_id}
)
score = server.score_create(
    {**P, "prediction_id": prediction.prediction_id, "scorer": scorer.scorer, "value": 1.0, "evaluation_run_id": run.evaluation_run_id}
)
server.prediction_finish({**P, "prediction_id": prediction.prediction_id})
server.evaluation_run_finish({**P, "evaluation_run_id": run.evaluation_run_id, "summary": {"by": "sdk"}})

ops = [o.object_id for o in server.op_list({**P, "limit": 100})]
runs = [
    r.evaluation_run_id
    for r in server.evaluation_run_list({**P, "filter": {"evaluations": [evaluation.evaluation_ref], "models": [model.model_ref]}})
]
print(
    json.dumps(
        {
            "op": dump(op),
            "op_read": dump(op_read),
            "ops": ops,
            "dataset": dump(server.dataset_read({**P, "object_id": dataset.object_id, "digest": dataset.digest})),
            "model": dump(server.model_read({**P, "object_id": model.object_id, "digest": model.digest})),
            "evaluation": dump(server.evaluation_read({**P, "object_id": evaluation.object_id, "digest": evaluation.digest})),
            "run_id": run.evaluation_run_id,
            "run": dump(server.evaluation_run_read({**P, "evaluation_run_id": run.evaluation_run_id})),
            "runs": runs,
            "prediction": dump(server.prediction_read({**P, "prediction_id": prediction.prediction_id})),
            "scores": [dump(s) for s in server.score_list({**P, "evaluation_run_id": run.evaluation_run_id})],
            "score_id": score.score_id,
            "op_deleted": dump(server.op_delete({**P, "object_id": op.object_id, "digests": [op.digest]})),
            "runs_deleted": dump(server.evaluation_run_delete({**P, "evaluation_run_ids": [run.evaluation_run_id]})),
        }
    )
)
