"""The links the Weave Python SDK prints, as a new user sees them (test/ui-daily-use.test.ts).

Environment: WANDB_BASE_URL (weft's URL), WANDB_API_KEY, WEFT_PROJECT (`<entity>/<project>`).
Traces an agent (a root with a child), a call that raises ValueError, publishes a dataset and an
op; the SDK prints its project, call, object and op links on the way (the test reads them from
this process's output). The last line is JSON naming what was written.
"""

import json
import os

import weave

client = weave.init(os.environ["WEFT_PROJECT"])


@weave.op
def llm(question: str) -> str:
    return "four"


@weave.op
def agent(question: str) -> str:
    return llm(question)


@weave.op
def divide(a: float, b: float) -> float:
    if b == 0:
        raise ValueError("cannot divide by zero")
    return a / b


agent("What is 2 + 2?")
try:
    divide(1, 0)
except ValueError:
    pass

dataset_ref = weave.publish(weave.Dataset(name="arith", rows=[{"q": "2 + 2", "a": "4"}, {"q": "3 + 3", "a": "6"}]))
op_ref = weave.publish(agent)
client.flush()
print(json.dumps({"dataset_digest": dataset_ref.digest, "op_digest": op_ref.digest}), flush=True)
