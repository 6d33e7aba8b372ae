"""Reads back through the Weave Python SDK what the UI wrote (test/ui-datasets.test.ts).

Environment: WANDB_BASE_URL, WANDB_API_KEY, WEFT_PROJECT. Arguments: `dataset <uri>` prints the
dataset's name and rows as `weave.ref(uri).get()` gives them; `view <uri>` prints the saved
view's label, filter, query and sort as `SavedView.load(uri)` reads them, and the ids of the
calls its `get_calls()` returns. One JSON line.
"""

import json
import os
import sys

import weave
from weave.flow.saved_view import SavedView

weave.init(os.environ["WEFT_PROJECT"])
kind, uri = sys.argv[1], sys.argv[2]
if kind == "dataset":
    dataset = weave.ref(uri).get()
    rows = [dict(r) for r in dataset.rows]
    print(json.dumps({"name": dataset.name, "class": type(dataset).__name__, "rows": rows}), flush=True)
else:
    view = SavedView.load(uri)
    d = view.base.definition
    print(
        json.dumps(
            {
                "label": view.label,
                "view_type": view.view_type,
                "filter": d.filter.model_dump(exclude_none=True) if d.filter else None,
                "query": d.query.model_dump(by_alias=True, exclude_none=True) if d.query else None,
                "sort_by": [s.model_dump() for s in d.sort_by or []],
                "columns": [c.path for c in d.columns or []],
                "call_ids": [c.id for c in view.get_calls()],
            }
        ),
        flush=True,
    )
