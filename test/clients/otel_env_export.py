"""Exports spans with the stock OpenTelemetry Python SDK configured by the environment alone.

Usage: otel_env_export.py <spans> <trace name>
The exporter is built with no arguments, as an application instrumented by the book would:
OTEL_EXPORTER_OTLP_ENDPOINT (a base URL; the exporter appends /v1/traces) and
OTEL_EXPORTER_OTLP_HEADERS come from the caller. Prints one JSON document: every export result
and each span's ids. The exporter's own log lines go to stderr, as they would on a terminal.
"""
import json
import logging
import sys

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter

logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
count, name = int(sys.argv[1]), sys.argv[2]
exporter = OTLPSpanExporter()
results = []


class Recording(SpanExporter):
    """Passes spans to the real exporter and keeps each export's result."""

    def export(self, spans):
        r = exporter.export(spans)
        results.append(r.name)
        return r

    def shutdown(self):
        exporter.shutdown()


provider = TracerProvider(resource=Resource.create({"service.name": "weft-env-test"}))
provider.add_span_processor(SimpleSpanProcessor(Recording()))
tracer = provider.get_tracer("weft.env")
spans = []
for i in range(count):
    with tracer.start_as_current_span(f"{name} {i}") as span:
        ctx = span.get_span_context()
        spans.append({"trace_id": format(ctx.trace_id, "032x"), "span_id": format(ctx.span_id, "016x")})
provider.shutdown()
print(json.dumps({"endpoint": exporter._endpoint, "results": results, "spans": spans}))
