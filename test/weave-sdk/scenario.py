"""The official Weave Python SDK against weft, as a new user would run it.

Environment: WANDB_BASE_URL (weft's URL), WANDB_API_KEY (a weft key), WEFT_PROJECT
(`<entity>/<project>`). Nothing else: no WF_TRACE_SERVER_URL, no WEAVE_USE_CALLS_COMPLETE.

Every flow of issue 11 runs through the SDK and is checked twice: through the SDK's own reads
and through raw POST /calls/stream_query. Every WARNING (or worse) the SDK logs is collected;
any is a failure (a failed request, a dropped batch). Prints one JSON line per check and a
final `{"ok": true, ...}` line; exits non-zero on the first failed check.
"""

import asyncio
import base64
import json
import logging
import os
import sys
import time

# Logs of the SDK (weave.*) and of its HTTP stack, WARNING and above, kept for the final check.
WARNINGS: list[str] = []


# No notice is allowed: weft answers the SDK's feedback rows in the reference's names only
# (weave_ref, wb_user_id), so the SDK has no unknown name to warn about ignoring.
ALLOWED: tuple[str, ...] = ()


class Collect(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        # The SDK's own error telemetry to W&B (Sentry; off by WANDB_ERROR_REPORTING=false in
        # newer releases only) cannot reach the internet from here; it is not a request to weft.
        if message not in ALLOWED and "sentry.io" not in message:
            WARNINGS.append(f"{record.name}: {message}")


logging.getLogger().addHandler(Collect(level=logging.WARNING))

import httpx  # noqa: E402  (installed with weave)
import weave  # noqa: E402
from weave import Dataset, Evaluation, Model, Object  # noqa: E402

BASE = os.environ["WANDB_BASE_URL"].rstrip("/")
KEY = os.environ["WANDB_API_KEY"]
PROJECT = os.environ["WEFT_PROJECT"]
ENTITY, PROJECT_NAME = PROJECT.split("/")
AUTH = "Basic " + base64.b64encode(f"api:{KEY}".encode()).decode()
CHECKS = 0


def check(cond: bool, what: str, detail: object = None) -> None:
    global CHECKS
    CHECKS += 1
    if not cond:
        print(json.dumps({"ok": False, "check": what, "detail": repr(detail)[:2000]}), flush=True)
        sys.exit(1)


def raw_calls(query: dict) -> list[dict]:
    """POST /calls/stream_query straight to weft (the trace API under /traces/, as the SDK uses it)."""
    r = httpx.post(
        f"{BASE}/traces/calls/stream_query",
        json={"project_id": PROJECT, **query},
        headers={"Authorization": AUTH},
        timeout=60,
    )
    check(r.status_code == 200, "raw stream_query answers 200", r.text)
    return [json.loads(line) for line in r.text.splitlines() if line.strip()]


# --- weave.init with weft alone (GraphQL + /traces) ------------------------------------------
client = weave.init(PROJECT)
check(client.entity == ENTITY and client.project == PROJECT_NAME, "weave.init resolves the project", (client.entity, client.project))


# --- @weave.op tracing: nested calls and an exception ----------------------------------------
@weave.op
def tokenize(text: str) -> list:
    return text.split()


@weave.op
def count_words(text: str) -> dict:
    words = tokenize(text)
    return {"n": len(words), "first": words[0]}


@weave.op
def explode(x: int) -> int:
    raise ValueError(f"boom {x}")


result = count_words("hello brave new world")
check(result == {"n": 4, "first": "hello"}, "op returns its value", result)
try:
    explode(7)
    check(False, "the op raised")
except ValueError:
    pass
client.flush()

calls = list(client.get_calls(filter={"op_names": [f"weave:///{PROJECT}/op/count_words:*"]}))
check(len(calls) == 1, "get_calls filtered by op name finds the call", [c.op_name for c in calls])
parent = calls[0]
check(parent.output == {"n": 4, "first": "hello"}, "call output read back", parent.output)
check(parent.inputs["text"] == "hello brave new world", "call inputs read back", parent.inputs)
check(parent.summary["weave"]["status"] == "success", "status success", parent.summary)
children = list(parent.children())
check(len(children) == 1 and children[0].op_name.startswith(f"weave:///{PROJECT}/op/tokenize:"), "children() finds the nested call", [c.op_name for c in children])
check(children[0].output == ["hello", "brave", "new", "world"], "child output", children[0].output)
check(children[0].trace_id == parent.trace_id and children[0].parent_id == parent.id, "child linked to parent", children[0])

failed = list(client.get_calls(filter={"op_names": [f"weave:///{PROJECT}/op/explode:*"]}))
check(len(failed) == 1 and "boom 7" in (failed[0].exception or ""), "exception recorded", failed and failed[0].exception)
check(failed[0].summary["weave"]["status"] == "error", "status error", failed[0].summary)

one = client.get_call(parent.id)
check(one.id == parent.id and one.output == parent.output, "get_call reads one call", one)
raw = raw_calls({"filter": {"trace_ids": [parent.trace_id]}})
check(len(raw) == 2, "raw stream_query sees parent and child", raw)
uid = raw[0]["svc_user_id"]
check(uid and all(c["svc_user_id"] == uid and c["wb_user_id"] == uid for c in raw), "calls carry svc_user_id and wb_user_id", raw)
check(getattr(one, "wb_user_id", uid) == uid, "the SDK reads wb_user_id", getattr(one, "wb_user_id", None))
mine = list(client.get_calls(filter={"wb_user_ids": [uid], "trace_roots_only": True}))
others = list(client.get_calls(filter={"wb_user_ids": ["nobody-at-all"]}))
check(len(mine) >= 2 and len(others) == 0, "filter.wb_user_ids filters", (len(mine), len(others)))

# set_display_name, then delete
parent.set_display_name("counted")
client.flush()
check(client.get_call(parent.id).display_name == "counted", "set_display_name renames", client.get_call(parent.id).display_name)
raw = raw_calls({"filter": {"call_ids": [parent.id]}})
check(raw[0]["display_name"] == "counted", "raw sees the new display name", raw)

throwaway = count_words("to be deleted")
client.flush()
doomed = [c for c in client.get_calls(filter={"op_names": [f"weave:///{PROJECT}/op/count_words:*"]}) if c.inputs["text"] == "to be deleted"]
check(len(doomed) == 1, "the call to delete exists", doomed)
doomed_child = list(doomed[0].children())
check(len(doomed_child) == 1, "it has a child", doomed_child)
doomed[0].delete()
check(len(raw_calls({"filter": {"call_ids": [doomed[0].id, doomed_child[0].id]}})) == 0, "call.delete() removes it and its descendants", doomed[0].id)
check(len(raw_calls({"filter": {"call_ids": [parent.id]}})) == 1, "other calls survive the delete", parent.id)


# --- feedback: reactions, notes, read back ---------------------------------------------------
parent.feedback.add_reaction("👍")
parent.feedback.add_note("looks right")
client.flush()
fb = list(client.get_call(parent.id).feedback)
types = sorted(f.feedback_type for f in fb)
check(types == ["wandb.note.1", "wandb.reaction.1"], "call feedback read back", types)
note = next(f for f in fb if f.feedback_type == "wandb.note.1")
check(note.payload["note"] == "looks right", "note payload", note.payload)
all_fb = list(client.get_feedback())
check(len(all_fb) >= 2 and all(f.weave_ref for f in all_fb), "client.get_feedback() with weave_ref", [(f.feedback_type, f.weave_ref) for f in all_fb])
reaction = next(f for f in fb if f.feedback_type == "wandb.reaction.1")
parent.feedback.purge(reaction.id)
left = sorted(f.feedback_type for f in client.get_call(parent.id).feedback)
check(left == ["wandb.note.1"], "feedback purge removes one", left)
raw = raw_calls({"filter": {"call_ids": [parent.id]}, "include_feedback": True})
check(any(f["feedback_type"] == "wandb.note.1" for f in raw[0]["summary"]["weave"]["feedback"]), "raw include_feedback sees the note", raw[0]["summary"])


# --- publish: plain objects, weave.Object, weave.Model, weave.Dataset; ref.get() -------------
class Settings(Object):
    temperature: float
    tags: list


class Echo(Model):
    prefix: str

    @weave.op
    def predict(self, question: str) -> str:
        return self.prefix + question


plain_ref = weave.publish({"a": 1, "b": [1.5, "x", None], "nested": {"k": True}}, name="plain")
check(plain_ref.get() == {"a": 1, "b": [1.5, "x", None], "nested": {"k": True}}, "plain object round trip", plain_ref.get())
settings_ref = weave.publish(Settings(temperature=0.5, tags=["a", "b"]), name="settings")
s = settings_ref.get()
check(s.temperature == 0.5 and list(s.tags) == ["a", "b"], "weave.Object round trip", s)
echo = Echo(prefix="A: ")
echo_ref = weave.publish(echo, name="echo")
e = echo_ref.get()
check(e.prefix == "A: " and e.predict("q?") == "A: q?", "weave.Model round trip, its op runs", e)
rows = [{"question": f"q{i}", "expected": f"A: q{i}"} for i in range(5)]
ds_ref = weave.publish(Dataset(name="qa", rows=rows), name="qa")
ds = ds_ref.get()
got_rows = [dict(r) for r in ds.rows]
check(len(ds.rows) == 5 and got_rows[3]["question"] == "q3", "Dataset rows read back", got_rows)
latest = weave.ref(f"weave:///{PROJECT}/object/qa:latest").get()
check(len(latest.rows) == 5, "weave.ref(...:latest).get() reads the dataset", latest)
again = weave.publish({"a": 1, "b": [1.5, "x", None], "nested": {"k": True}}, name="plain")
check(again.digest == plain_ref.digest, "same object, same digest", (again.digest, plain_ref.digest))

# obj delete: a version published and deleted is gone
tmp_ref = weave.publish({"tmp": 1}, name="tmp-object")
client.delete_object_version(tmp_ref)
gone = False
try:
    tmp_ref.get()
except Exception:
    gone = True
check(gone, "a deleted object version can no longer be read", tmp_ref)


# --- an op loaded back from its ref (source file) ---------------------------------------------
@weave.op
def shout(text: str) -> str:
    return text.upper() + "!"


shout("warm up")  # publishes the op (source file + object)
client.flush()
loaded = weave.ref(f"weave:///{PROJECT}/op/shout:latest").get()
check(loaded("hey") == "HEY!", "an op loaded from its ref runs", loaded)


# --- Evaluation with a scorer -----------------------------------------------------------------
@weave.op
def exact(expected: str, output: str) -> dict:
    return {"match": expected == output}


evaluation = Evaluation(name="echo-eval", dataset=ds, scorers=[exact])
summary = asyncio.run(evaluation.evaluate(echo))
check(summary["exact"]["match"]["true_count"] == 5, "evaluation summary", summary)
client.flush()
evals = list(client.get_calls(filter={"op_names": [f"weave:///{PROJECT}/op/Evaluation.evaluate:*"]}))
check(len(evals) == 1 and evals[0].ended_at is not None, "the evaluation call is stored and ended", evals)
check(evals[0].output["exact"]["match"]["true_count"] == 5, "the evaluation call's output is the summary", evals[0].output)
preds = list(client.get_calls(filter={"op_names": [f"weave:///{PROJECT}/op/Echo.predict:*"]}))
check(len(preds) >= 6, "every prediction is a call", len(preds))
runnable = [f for f in client.get_feedback() if f.feedback_type.startswith("wandb.runnable.")]
check(len(runnable) >= 5 and all(f.payload["output"]["match"] is True for f in runnable), "scorer results stored as feedback", [(f.feedback_type, f.payload) for f in runnable])
raw_eval = raw_calls({"filter": {"trace_ids": [evals[0].trace_id]}})
check(len(raw_eval) >= 1 + 5 * 3, "raw stream_query sees the whole evaluation trace", len(raw_eval))

# --- nothing failed --------------------------------------------------------------------------
client.finish() if hasattr(client, "finish") else client.flush()
time.sleep(0.2)
check(WARNINGS == [], "the SDK logged no warning (no failed request, nothing dropped)", WARNINGS)
print(json.dumps({"ok": True, "checks": CHECKS, "weave": weave.__version__}), flush=True)
