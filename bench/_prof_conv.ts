import { encodeExportTraceServiceRequest } from '@weft/otlp';
import { exportRequest } from './otlp-span-mix';
import { encodeSpanParts } from '../services/gateway/src/otlp-spans';
const body = Buffer.from(encodeExportTraceServiceRequest(exportRequest(512, true)));
const opts = { projectId: 'a/b', runId: null, userId: 'u', acceptedAtMicros: 1_700_000_000_000_000 };
const t = performance.now(); let n = 0;
while (performance.now() - t < Number(process.env.MS ?? 8000)) { encodeSpanParts({ protobuf: body }, opts); n += 512; }
console.log('µs/span', ((performance.now() - t) * 1000 / n).toFixed(1));
