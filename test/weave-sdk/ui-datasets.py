"""What the datasets and saved-views UI test works on, written by the Weave Python SDK
(test/ui-datasets.test.ts).

Environment: WANDB_BASE_URL (weft's URL), WANDB_API_KEY, WEFT_PROJECT (`<entity>/<project>`).
Traces six calls of an op `answer(question, context) -> {answer, confidence}`, publishes a
Dataset `qa` (two rows), a 100,000-row Dataset `big`, and a SavedView of the `answer` calls
sorted oldest first. The last line is JSON naming what was written.
"""

import json
import os

import weave
from weave.flow.saved_view import SavedView

client = weave.init(os.environ["WEFT_PROJECT"])


@weave.op
def answer(question: str, context: str) -> dict:
    return {"answer": str(eval(question)), "confidence": round(0.5 + len(context) / 100, 2)}


for i, q in enumerate(["1 + 1", "2 + 3", "4 * 4", "10 - 7", "6 / 3", "9 + 9"]):
    answer(q, "arithmetic " * (i + 1))

qa = weave.publish(weave.Dataset(name="qa", rows=[{"question": "2 + 2", "answer": "4"}, {"question": "3 + 3", "answer": "6"}]))
big = weave.publish(weave.Dataset(name="big", rows=[{"id": i, "text": f"row {i}", "label": i % 3} for i in range(100_000)]))
view = SavedView("traces", "Answers, oldest first").filter_op("answer").sort_by("started_at", "asc")
view.save()
client.flush()
print(json.dumps({"qa": qa.uri(), "big": big.uri(), "view": view.ref.uri(), "view_url": view.ui_url()}), flush=True)
