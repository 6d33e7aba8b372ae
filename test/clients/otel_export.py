"""Exports spans to weft with the stock OpenTelemetry Python SDK and one of its OTLP exporters.

Usage: otel_export.py <grpc|http> <endpoint> <authorization> <project> <gzip|none> <spans> <seed>
Makes <spans> spans in traces of 10 (a root and 9 children, one child carrying old and new
semantic-convention names side by side), with explicit nanosecond start and end times, exports
them through a BatchSpanProcessor, and prints one JSON document: the SDK and exporter versions,
every export result, and each span's ids, parent and times as the SDK holds them.
"""
import json
import sys
from importlib.metadata import version

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import set_span_in_context

protocol, endpoint, authorization, project, compression, count, seed = sys.argv[1:8]
count, seed = int(count), int(seed)
headers = {"authorization": authorization, "project_id": project}

if protocol == "grpc":
    import grpc
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    exporter = OTLPSpanExporter(
        endpoint=endpoint,
        insecure=True,
        headers=headers,
        compression=grpc.Compression.Gzip if compression == "gzip" else grpc.Compression.NoCompression,
        timeout=60,
    )
else:
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    exporter = OTLPSpanExporter(
        endpoint=endpoint,
        headers=headers,
        compression=Compression.Gzip if compression == "gzip" else Compression.NoCompression,
        timeout=60,
    )

results = []


class Recording(SpanExporter):
    """Passes spans to the real exporter and keeps each export's result."""

    def export(self, spans):
        r = exporter.export(spans)
        results.append({"spans": len(spans), "result": r.name})
        return r

    def shutdown(self):
        exporter.shutdown()

    def force_flush(self, timeout_millis=30000):
        return exporter.force_flush(timeout_millis)


provider = TracerProvider(resource=Resource.create({"service.name": f"weft-{protocol}-test"}))
provider.add_span_processor(BatchSpanProcessor(Recording(), max_queue_size=count + 10, max_export_batch_size=512, schedule_delay_millis=100))
tracer = provider.get_tracer("weft.compat", "1.0")

spans = []
base = 1_714_564_800_000_000_000 + seed * 1_000_000_000_000
for t in range(0, count, 10):
    root_start = base + t * 1_000_000 + 456_789  # odd micro- and nanoseconds: the exact instants must survive
    root = tracer.start_span(f"agent.run {t}", start_time=root_start, attributes={"input.value": f"question {t}", "output.value": f"answer {t}"})
    ctx = set_span_in_context(root)
    children = []
    for c in range(1, min(10, count - t)):
        start = root_start + c * 1_000 + 7
        attrs = {"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": c, "gen_ai.usage.output_tokens": 2 * c}
        if c == 1:
            attrs.update({"db.system": "postgresql", "db.system.name": "postgresql"})
        child = tracer.start_span(f"chat {c}", context=ctx, start_time=start, attributes=attrs)
        child.end(end_time=start + 500_001)
        children.append((child, start, start + 500_001))
    root.end(end_time=root_start + 9_999_999)
    for s, start, end in [(root, root_start, root_start + 9_999_999)] + children:
        sc = s.get_span_context()
        parent = s.parent.span_id if s.parent else None
        spans.append({
            "name": s.name,
            "trace_id": format(sc.trace_id, "032x"),
            "span_id": format(sc.span_id, "016x"),
            "parent_id": format(parent, "016x") if parent else None,
            "start_ns": str(start),
            "end_ns": str(end),
        })

flushed = provider.force_flush(120_000)
provider.shutdown()
print(json.dumps({
    "sdk": version("opentelemetry-sdk"),
    "exporter": version(f"opentelemetry-exporter-otlp-proto-{protocol}"),
    "flushed": flushed,
    "results": results,
    "spans": spans,
}))
