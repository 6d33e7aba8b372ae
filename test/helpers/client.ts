export { basicAuth, bearerAuth, Client, HARNESS_API_KEY, postOversized, type Reply } from '@weft/harness';
