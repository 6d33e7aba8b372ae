// The tasks of an ingest worker thread (ingest-workers.ts): each is one request's body, converted by the function the serving thread runs.
import { conversions } from './conversions';

export const { convertSpans, convertCallBatch } = conversions;
