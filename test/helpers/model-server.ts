export { startModelServer, type FakeDialect, type ModelServer, type RecordedRequest } from '@weft/harness';
