"""Two evaluations of one dataset by the Weave Python SDK, as a user runs them (test/ui-evaluations.test.ts).

Environment: WANDB_BASE_URL (weft's URL), WANDB_API_KEY, WEFT_PROJECT (`<entity>/<project>`).
One Dataset of sums, two models (plain weave.Model subclasses, one sloppier than the other),
two scorers (a function returning {"correct": bool}, and a number), `Evaluation.evaluate` run
once per model, then a Leaderboard over both scorers. The last line is JSON naming what was
written (each run's summary as evaluate returned it).
"""

import asyncio
import json
import os

import weave
from weave.flow import leaderboard

client = weave.init(os.environ["WEFT_PROJECT"])

ROWS = [
    {"question": "2 + 2", "expected": 4},
    {"question": "3 + 5", "expected": 8},
    {"question": "10 + 7", "expected": 17},
    {"question": "6 + 6", "expected": 12},
    {"question": "9 + 1", "expected": 10},
    {"question": "4 + 3", "expected": 7},
]


def add(question: str) -> int:
    a, b = (int(x) for x in question.split("+"))
    return a + b


class Careful(weave.Model):
    """Right but on one sum (10 + 7), off by two there."""

    version: str = "careful-1"

    @weave.op
    def predict(self, question: str) -> int:
        return add(question) + (2 if question == "10 + 7" else 0)


class Hasty(weave.Model):
    """Off by one on 3 + 5 and 6 + 6, off by three on 9 + 1; right on 10 + 7."""

    version: str = "hasty-1"

    @weave.op
    def predict(self, question: str) -> int:
        off = {"3 + 5": 1, "6 + 6": 1, "9 + 1": 3}
        return add(question) + off.get(question, 0)


@weave.op
def exact(expected: int, output: int) -> dict:
    return {"correct": output == expected}


@weave.op
def closeness(expected: int, output: int) -> float:
    return 1.0 / (1.0 + abs(output - expected))


dataset = weave.Dataset(name="sums", rows=ROWS)
evaluation = weave.Evaluation(name="sums-eval", dataset=dataset, scorers=[exact, closeness])
careful = Careful(name="careful")
hasty = Hasty(name="hasty")
summaries = {}
summaries["careful"] = asyncio.run(evaluation.evaluate(careful))
summaries["hasty"] = asyncio.run(evaluation.evaluate(hasty))

eval_ref = weave.publish(evaluation)
board = leaderboard.Leaderboard(
    name="sums-board",
    description="Careful against hasty on sums",
    columns=[
        leaderboard.LeaderboardColumn(
            evaluation_object_ref=eval_ref.uri(),
            scorer_name="exact",
            summary_metric_path="correct.true_fraction",
        ),
        leaderboard.LeaderboardColumn(
            evaluation_object_ref=eval_ref.uri(),
            scorer_name="closeness",
            summary_metric_path="mean",
        ),
    ],
)
board_ref = weave.publish(board)
client.flush()
print(json.dumps({"summaries": summaries, "evaluation_ref": eval_ref.uri(), "leaderboard_ref": board_ref.uri()}), flush=True)
