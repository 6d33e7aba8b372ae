"""Reads a call's feedback through the Weave Python SDK (test/ui-daily-use.test.ts): what the
UI wrote must be what `call.feedback` and `client.get_feedback()` return.

Environment: WANDB_BASE_URL, WANDB_API_KEY, WEFT_PROJECT; argument: the call id. Prints one JSON
object: the call's feedback and the project's thumbs-down reactions, as the SDK sees them.
"""

import json
import os
import sys

import weave

client = weave.init(os.environ["WEFT_PROJECT"])
call = client.get_call(sys.argv[1])
on_call = [{"feedback_type": f.feedback_type, "payload": dict(f.payload)} for f in call.feedback]
down = [f.weave_ref for f in client.get_feedback(reaction="👎")]
print(json.dumps({"call": on_call, "thumbs_down_refs": down}), flush=True)
