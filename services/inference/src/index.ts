export * from './routes';
export { loadUpstreams, UpstreamRegistry, DIALECTS, type Dialect } from './upstreams';
export { PROJECT_HEADER, CALL_ID_HEADER } from './completion-front';
export { CHAT_OP_NAME } from './chat-completions';
export { TEXT_COMPLETION_OP_NAME } from './text-completions';
export { EMBEDDINGS_OP_NAME } from './embeddings';
export { COMPLETIONS_OP_NAME } from './completions';
export * from './role';
