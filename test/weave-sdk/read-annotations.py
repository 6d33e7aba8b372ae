"""Reads calls' feedback and an AnnotationSpec through the Weave Python SDK
(test/ui-annotate.test.ts): the scores, thumbs and notes the UI wrote must be what `call.feedback`
and `client.get_feedback()` return, and a spec made in the UI must load as an AnnotationSpec.

Environment: WANDB_BASE_URL, WANDB_API_KEY, WEFT_PROJECT; arguments: a spec ref, then call ids.
Prints one JSON object: each call's feedback, the project's annotation feedback, and the spec.
"""

import json
import os
import sys

import weave

client = weave.init(os.environ["WEFT_PROJECT"])


def row(f):
    return {
        "feedback_type": f.feedback_type,
        "payload": dict(f.payload),
        "annotation_ref": f.annotation_ref,
        "queue_id": f.queue_id,
    }


calls = {cid: [row(f) for f in client.get_call(cid).feedback] for cid in sys.argv[2:]}
annotations = [
    {**row(f), "weave_ref": f.weave_ref}
    for f in client.get_feedback(
        query={"$expr": {"$contains": {"input": {"$getField": "feedback_type"}, "substr": {"$literal": "wandb.annotation."}}}},
        limit=1000,
    )
]
spec = weave.ref(sys.argv[1]).get()
print(
    json.dumps(
        {
            "calls": calls,
            "annotations": annotations,
            "spec": {"class": type(spec).__name__, "name": spec.name, "field_schema": spec.field_schema},
        }
    ),
    flush=True,
)
