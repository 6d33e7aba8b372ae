"""A project's ingest policies as the Weave Python SDK meets them (test/ingest-policies.test.ts).

Reads the project's settings through the SDK's own vendored server client (GET
/project/sensitive_data_settings, /project/ingest_sampling_settings/read, /project/ttl_settings/read),
then traces N requests, each a root op calling a child op, with personal data in their inputs and
outputs. Environment: WANDB_BASE_URL, WANDB_API_KEY, WEFT_PROJECT; argument: N. Prints one JSON
object: the settings read, and each trace's id with its root call's id.
"""

import json
import os
import sys

import weave

project = os.environ["WEFT_PROJECT"]
client = weave.init(project)


def vendored_client(server):
    """The SDK's generated (Stainless) client, under its middleware layers."""
    seen = set()
    while server is not None and id(server) not in seen:
        seen.add(id(server))
        if hasattr(server, "_stainless_client"):
            return server._stainless_client
        server = getattr(server, "_next_trace_server", None)
    raise SystemExit("the SDK's vendored server client was not found")


api = vendored_client(client.server)
settings = {
    "sensitive_data": api.projects.sensitive_data_settings.read(project_id=project).policy,
    "ingest_sampling": api.projects.ingest_sampling_settings.read(project_id=project).model_dump(),
    "retention_days": api.projects.ttl_settings.read(project_id=project).retention_days,
}


@weave.op
def lookup(email: str) -> str:
    return f"found {email}: phone +1 415-555-0132, card 4111 1111 1111 1111"


@weave.op
def handle(request: dict) -> dict:
    return {"answer": lookup(request["email"]), "ssn": "123-45-6789"}


traces = []
for i in range(int(sys.argv[1])):
    _, call = handle.call({"email": f"user{i}@example.com", "note": "plain text stays"})
    traces.append({"trace_id": call.trace_id, "root_id": call.id})
client.flush()
print(json.dumps({"settings": settings, "traces": traces}), flush=True)
