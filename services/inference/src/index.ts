export * from './routes';
export { loadUpstreams, UpstreamRegistry, DIALECTS, type Dialect } from './upstreams';
export { PROJECT_HEADER, CALL_ID_HEADER, CHAT_OP_NAME } from './chat-completions';
export { COMPLETIONS_OP_NAME } from './completions';
export * from './role';
