// The tasks of an ingest worker thread (ingest-workers.ts): each is one request's body, converted by the functions the serving thread runs.
import { IngestConversions } from './conversions';

export const { convertSpans, convertCallBatch } = new IngestConversions();
