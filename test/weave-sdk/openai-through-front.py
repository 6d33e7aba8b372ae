"""The README's two examples together, as a new user puts them: weave.init (the Weave SDK's OpenAI
integration records every request) and the OpenAI SDK through weft's /v1 front with x-project-id
(the front records every request too), inside a @weave.op. Three chat completions, one streamed,
and one Responses API request. Prints the response ids."""
import json
import os
from importlib.metadata import version

import weave
from openai import OpenAI

project = os.environ["WEFT_PROJECT"]
weave_client = weave.init(project)
client = OpenAI(
    base_url=f"{os.environ['WANDB_BASE_URL']}/v1",
    api_key=os.environ["WANDB_API_KEY"],
    max_retries=0,
    default_headers={"x-project-id": project},
)


@weave.op
def ask(question: str) -> str:
    return client.chat.completions.create(model="m-vllm", messages=[{"role": "user", "content": question}]).id


@weave.op
def ask_streamed(question: str) -> str:
    stream = client.chat.completions.create(
        model="m-vllm", messages=[{"role": "user", "content": question}], stream=True, stream_options={"include_usage": True}
    )
    return [chunk.id for chunk in stream][-1]


@weave.op
def ask_responses(question: str) -> str:
    return client.responses.create(model="m-vllm", input=question).id


ids = [ask("one"), ask("two"), ask_streamed("three"), ask_responses("four")]
weave_client.flush()
print(json.dumps({"ids": ids, "versions": {p: version(p) for p in ["weave", "openai"]}}))
