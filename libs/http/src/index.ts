// What other packages use, by name (a package that needs more adds it here).
export { createHttpServer } from './server';
export { type ErrorMapper, toApiError } from './errors';
export type { Authenticator } from './auth';
export { addGuardedGet, addRawBodyRoute, addRoute, authenticateHook, type RouteContext } from './route';
export { checkRouteJsonBody } from './route-body';
export { sendJsonArrayObject, sendJsonl, sendJsonlText, sendStream, writeOrWait } from './stream';
export { defaultRequestLimits, type RequestLimits, requestLimitsFromConfig } from './limits';
export { checkJsonValue, mayCrossLimits, parseJsonBody } from './json-body';
export { enforceTenancy, mayHoldRefs } from './tenancy';
export { sendJsonText, useLosslessJsonBodies } from './lossless';
export { checkReadiness } from './readiness';
export { EventLoopTurns } from './turns';
export { KeyRateLimiter } from './rate-limit';
export { documentRoutes } from './route-docs';
export { noteProject, projectInJsonBytes, refusalReason } from './delivery-counts';
