"""Alerts from the Weave SDK: `setup` publishes the op `answer` and an AlertSpec on the mean of its
`output.score` over the last 10 calls (below 0.5 fires); `calls <score>…` traces one call of
`answer` per score. Prints one JSON line at the end."""
import json
import os
import sys

import weave
from weave.trace.builtin_object_classes.alert_spec import AlertSpec, WeaveMetricThresholdSpec

client = weave.init(os.environ["WEFT_PROJECT"])


@weave.op
def answer(score: float) -> dict:
    return {"score": score}


if sys.argv[1] == "setup":
    op_ref = weave.publish(answer)
    every_version = op_ref.uri().rsplit(":", 1)[0] + ":*"
    alert = AlertSpec(
        name="low-score",
        description="the judge's score fell",
        op_scope=[every_version],
        spec=WeaveMetricThresholdSpec(
            metric_path="output.score",
            aggregation_function="mean",
            comparison_operator="LESS_THAN",
            threshold=0.5,
            window_size=10,
        ),
    )
    ref = weave.publish(alert)
    print(json.dumps({"alert_ref": ref.uri(), "op": every_version}))
else:
    calls = []
    for s in sys.argv[2:]:
        _, call = answer.call(float(s))
        calls.append(call.id)
    client.flush()
    print(json.dumps({"calls": calls}))
