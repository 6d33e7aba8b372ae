"""The Responses API through weft's /v1 front, as stock clients use it.

Usage: responses_client.py <weft url> <api key> <project> <agents project>
  1. The OpenAI SDK's client.responses.create: whole, streamed, a function tool answered with
     previous_response_id, and requests weft or the server refuse. Traced with x-project-id.
  2. openai-agents with its default model (OpenAIResponsesModel), an agent with a tool; its spans go
     to weft's OTLP endpoint through openinference-instrumentation-openai-agents.
Prints one JSON document: versions, answers, stream event types, errors (status, param, type).
"""
import asyncio
import json
import sys
from importlib.metadata import version

import openai
from openai import OpenAI

weft, key, project, agents_project = sys.argv[1:5]
out = {"versions": {p: version(p) for p in ["openai", "openai-agents", "openinference-instrumentation-openai-agents"]}}
client = OpenAI(base_url=f"{weft}/v1", api_key=key, max_retries=0, default_headers={"x-project-id": project})
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def error_of(fn):
    try:
        fn()
        return {"error": None}
    except openai.APIStatusError as e:
        return {"error": type(e).__name__, "status": e.status_code, "body": e.body}


raw = client.responses.with_raw_response.create(model="m-vllm", instructions="You answer briefly.", input="Hi")
whole = raw.parse()
out["whole"] = {"response": whole.model_dump(), "output_text": whole.output_text, "call_id": raw.headers.get("x-svc-call-id")}

events = []
with client.responses.create(model="m-vllm", input=[{"role": "user", "content": "Hi again"}], stream=True) as stream:
    for ev in stream:
        events.append(ev.model_dump())
out["stream"] = {
    "types": [e["type"] for e in events],
    "text": "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta"),
    "completed": events[-1]["response"] if events and events[-1]["type"] == "response.completed" else None,
}

first = client.responses.create(model="m-vllm", input="tools", tools=[WEATHER])
call = next(item for item in first.output if item.type == "function_call")
second = client.responses.create(
    model="m-vllm",
    previous_response_id=first.id,
    input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}],
    tools=[WEATHER],
)
out["tools"] = {"first": first.model_dump(), "second": second.model_dump(), "output_text": second.output_text}

# A traced caller: weft's record of the request joins the caller's span.
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
traced = client.responses.with_raw_response.create(model="m-vllm", input="traced", extra_headers={"traceparent": TRACEPARENT})
out["traced"] = {"call_id": traced.headers.get("x-svc-call-id"), "output_text": traced.parse().output_text}

out["errors"] = {
    "unknown_previous": error_of(lambda: client.responses.create(model="m-vllm", input="Hi", previous_response_id="resp_nope")),
    "temperature": error_of(lambda: client.responses.create(model="m-vllm", input="Hi", temperature=7)),
    "input": error_of(lambda: client.responses.create(model="m-vllm", input=42)),
    "tool_name": error_of(lambda: client.responses.create(model="m-vllm", input="Hi", tools=[{"type": "function"}])),
    "unknown_model": error_of(lambda: client.responses.create(model="no-such-model", input="Hi")),
    "upstream_failure": error_of(lambda: client.responses.create(model="m-vllm", input="fail")),
}

# The Agents SDK with its default model: the Responses API.
from agents import Agent, Runner, function_tool, set_default_openai_client
from openai import AsyncOpenAI
from openinference.instrumentation import using_session
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "weft-test-agents-responses"}))
exporter = OTLPSpanExporter(
    endpoint=f"{weft}/otel/v1/traces", headers={"project_id": agents_project, "authorization": f"Bearer {key}"}
)
provider.add_span_processor(BatchSpanProcessor(exporter))
OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
set_default_openai_client(AsyncOpenAI(base_url=f"{weft}/v1", api_key=key, max_retries=0))


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


agent = Agent(name="Weather agent", instructions="You answer briefly.", model="m-vllm", tools=[get_weather])


async def main():
    with using_session("agents-responses-1"):
        result = await Runner.run(agent, "tools", max_turns=4)
    return result.final_output


out["agent"] = asyncio.run(main())
provider.force_flush()
provider.shutdown()
print(json.dumps(out))
