"""Runs a stock LLM instrumentation as its users do: its model calls go to weft's /v1 front, its
spans to weft's OTLP/HTTP endpoint.

Usage: instrumented_openai.py <mode> <weft url> <api key> <project> <dump file> [<gRPC host:port>] [<front project>]
  mode: openinference   openinference-instrumentation-openai, a tool call then its answer, in a session
        genai-span      opentelemetry-instrumentation-openai-v2, latest GenAI semconv, content on spans
        genai-agent     the same, a model call under the app's own `invoke_agent` span (an agent, its
                        version and its conversation, as the GenAI agent conventions name them)
        agents          openai-agents + openinference-instrumentation-openai-agents, an agent with a tool
        agents-bare     the same, an agent without instructions, on the Responses API (the SDK's default
                        model) then on chat completions: one trace each
        genai-events    opentelemetry-instrumentation-openai-v2, content as GenAI events (OTLP log records;
                        over OTLP/gRPC when a gRPC address is given, else OTLP/HTTP)
        openllmetry     OpenLLMetry's opentelemetry-instrumentation-openai (Traceloop), under a workflow span
Writes every exported span as one OTLP/JSON ExportTraceServiceRequest to <dump file> (the unit
tests' fixtures are such dumps) and prints one JSON document: the versions and what the model said.
"""
import asyncio
import json
import os
import sys
from importlib.metadata import version

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

mode, weft, key, project, dump = sys.argv[1:6]
# genai-events: logs over OTLP/gRPC to this host:port instead of OTLP/HTTP.
grpc_target = sys.argv[6] if len(sys.argv) > 6 and sys.argv[6] else None
# agents-bare: the project the front records the model requests in (x-project-id on the client).
front_project = sys.argv[7] if len(sys.argv) > 7 else None
exporter = OTLPSpanExporter(
    endpoint=f"{weft}/otel/v1/traces", headers={"project_id": project, "authorization": f"Bearer {key}"}
)
captured = []


class Capture(SpanExporter):
    """Forwards to the OTLP exporter and keeps the spans for the dump."""

    def export(self, spans):
        captured.extend(spans)
        return exporter.export(spans)

    def shutdown(self):
        exporter.shutdown()


provider = TracerProvider(resource=Resource.create({"service.name": f"weft-test-{mode}"}))
# The batch processor most setups use: a trace's spans reach weft together at the flush.
provider.add_span_processor(BatchSpanProcessor(Capture()))
out = {"mode": mode}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def chat_with_tool(client):
    """A tool call ("tools" makes the stand-in ask for get_weather) and the answer after its result."""
    messages = [{"role": "system", "content": "You answer briefly."}, {"role": "user", "content": "tools"}]
    first = client.chat.completions.create(model="m-vllm", messages=messages, tools=[WEATHER_TOOL], temperature=0.5)
    call = first.choices[0].message.tool_calls[0]
    messages += [
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
    ]
    second = client.chat.completions.create(model="m-vllm", messages=messages, tools=[WEATHER_TOOL])
    return [first.model_dump(), second.model_dump()]


def openai_v2_client():
    """An OpenAI client instrumented by opentelemetry-instrumentation-openai-v2 (latest GenAI semconv, content on spans)."""
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    from openai import OpenAI
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    out["versions"] = {p: version(p) for p in ["opentelemetry-instrumentation-openai-v2", "openai"]}
    return OpenAI(base_url=f"{weft}/v1", api_key=key, max_retries=0)


if mode == "openinference":
    from openai import OpenAI
    from openinference.instrumentation import using_session, using_user
    from openinference.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    out["versions"] = {p: version(p) for p in ["openinference-instrumentation-openai", "openai"]}
    client = OpenAI(base_url=f"{weft}/v1", api_key=key, max_retries=0)
    # The session is set below the app's root span: each model call is a turn of the thread.
    with provider.get_tracer("app").start_as_current_span("app"):
        with using_session("sess-oi"), using_user("user-7"):
            out["answers"] = chat_with_tool(client)
elif mode == "genai-span":
    client = openai_v2_client()
    out["answers"] = chat_with_tool(client)
elif mode == "genai-agent":
    client = openai_v2_client()
    # openai-v2 instruments the model calls; the agent's own span is the app's.
    agent = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "planner",
        "gen_ai.agent.version": "3",
        "gen_ai.conversation.id": "trip-planner-42",
    }
    with provider.get_tracer("trip-planner").start_as_current_span("invoke_agent planner", attributes=agent):
        answer = client.chat.completions.create(model="m-vllm", messages=[{"role": "user", "content": "Plan a day in Lisbon"}])
    out["answers"] = [answer.model_dump()]
elif mode == "agents":
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from openai import AsyncOpenAI
    from openinference.instrumentation import using_session
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    out["versions"] = {p: version(p) for p in ["openai-agents", "openinference-instrumentation-openai-agents"]}

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    model = OpenAIChatCompletionsModel(model="m-vllm", openai_client=AsyncOpenAI(base_url=f"{weft}/v1", api_key=key, max_retries=0))
    agent = Agent(name="Weather agent", instructions="You answer briefly.", model=model, tools=[get_weather])

    async def main():
        # The Agents SDK's group_id is not exported by the instrumentation: the session is how a run joins a thread.
        with using_session("agents-group-1"):
            result = await Runner.run(agent, "tools", max_turns=4)
        return result.final_output

    out["answers"] = asyncio.run(main())
elif mode == "agents-bare":
    from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    out["versions"] = {p: version(p) for p in ["openai-agents", "openinference-instrumentation-openai-agents"]}

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    headers = {"x-project-id": front_project} if front_project else None
    client = AsyncOpenAI(base_url=f"{weft}/v1", api_key=key, max_retries=0, default_headers=headers)
    # No instructions: OpenInference numbers the input messages from 1 (0 is the instructions').
    responses_model = OpenAIResponsesModel(model="m-vllm", openai_client=client)
    responses = Agent(name="Responses agent", model=responses_model, tools=[get_weather])
    chat = Agent(name="Chat agent", model=OpenAIChatCompletionsModel(model="m-vllm", openai_client=client), tools=[get_weather])

    async def main():
        return [(await Runner.run(agent, "tools", max_turns=4)).final_output for agent in (responses, chat)]

    out["answers"] = asyncio.run(main())
elif mode == "openllmetry":
    from openai import OpenAI
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    out["versions"] = {p: version(p) for p in ["opentelemetry-instrumentation-openai", "openai"]}
    client = OpenAI(base_url=f"{weft}/v1", api_key=key, max_retries=0)
    # The workflow span traceloop-sdk's @workflow opens (the SDK does not install on current pip:
    # its attributes are set here as it sets them); the model calls are its children.
    workflow = {"traceloop.span.kind": "workflow", "traceloop.entity.name": "weather", "traceloop.workflow.name": "weather"}
    with provider.get_tracer("traceloop.tracer").start_as_current_span("weather.workflow", attributes=workflow):
        out["answers"] = chat_with_tool(client)
elif mode == "genai-events":
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "EVENT_ONLY"
    from openai import OpenAI
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

    logs_headers = {"project_id": project, "authorization": f"Bearer {key}"}
    if grpc_target:
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter

        logs_exporter = GrpcLogExporter(endpoint=grpc_target, insecure=True, headers=logs_headers)
    else:
        # The Collector's paths, as an exporter given only OTEL_EXPORTER_OTLP_ENDPOINT posts to.
        logs_exporter = OTLPLogExporter(endpoint=f"{weft}/v1/logs", headers=logs_headers)
    logger_provider = LoggerProvider(resource=Resource.create({"service.name": "weft-test-genai-events"}))
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(logs_exporter))
    OpenAIInstrumentor().instrument(tracer_provider=provider, logger_provider=logger_provider)
    out["versions"] = {p: version(p) for p in ["opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai", "openai"]}
    client = OpenAI(base_url=f"{weft}/v1", api_key=key, max_retries=0)
    out["answers"] = chat_with_tool(client)
    out["logs_flushed"] = logger_provider.force_flush()
    logger_provider.shutdown()
else:
    sys.exit(f"unknown mode {mode}")

provider.force_flush()
with open(dump, "w") as f:
    json.dump(MessageToDict(encode_spans(captured)), f, indent=1, sort_keys=True)
    f.write("\n")
out["spans"] = len(captured)
print(json.dumps(out))
