// What other packages use, by name (a package that needs more adds it here).
export { createMcpServer, TOOL_NAMES } from './server';
export { fetchSend, type ApiRequest, type ApiResponse, type Send, WeftApi, WeftApiError } from './weft-api';
export { DEFAULT_BUDGET } from './budget';
