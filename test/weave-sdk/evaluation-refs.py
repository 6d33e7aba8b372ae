"""Two evaluations whose model outputs are refs, by the Weave Python SDK (test/evaluation-export.test.ts).

Environment: WANDB_BASE_URL (weft's URL), WANDB_API_KEY, WEFT_PROJECT (`<entity>/<project>`).
A published `lookup` object holds a table of capitals; both models answer with a value read from
it, so the SDK records each output as that value's ref
(`weave:///…/object/lookup:<digest>/attr/table/key/France`), not the string — what issue 53 saw.
`right` answers every country's capital, `muddled` answers Japan and Peru with another
country's. The last line is JSON naming what was written.
"""

import asyncio
import json
import os

import weave

client = weave.init(os.environ["WEFT_PROJECT"])

CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Italy": "Rome", "Peru": "Lima"}
ROWS = [{"country": c, "capital": cap} for c, cap in CAPITALS.items()]


class Lookup(weave.Object):
    table: dict


lookup_ref = weave.publish(Lookup(name="lookup", table=CAPITALS))
# Read back: its values now carry their refs, and an op returning one records the ref.
lookup = lookup_ref.get()


class Right(weave.Model):
    @weave.op
    def predict(self, country: str) -> str:
        return lookup.table[country]


class Muddled(weave.Model):
    @weave.op
    def predict(self, country: str) -> str:
        swap = {"Japan": "Italy", "Peru": "France"}
        return lookup.table[swap.get(country, country)]


@weave.op
def exact(capital: str, output: str) -> dict:
    return {"correct": output == capital}


evaluation = weave.Evaluation(name="capitals-eval", dataset=weave.Dataset(name="capitals", rows=ROWS), scorers=[exact])
summaries = {}
summaries["right"] = asyncio.run(evaluation.evaluate(Right(name="right")))
summaries["muddled"] = asyncio.run(evaluation.evaluate(Muddled(name="muddled")))
client.flush()
print(json.dumps({"summaries": summaries, "lookup_ref": lookup_ref.uri(), "capitals": CAPITALS}), flush=True)
