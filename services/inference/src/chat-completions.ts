import type { ChatCompletionReq } from '@weft/api';
import { FRONT_OP_NAMES } from '@weft/query';
import { StreamAggregator } from './aggregate';
import { validateChatRequest, validateSampling } from './chat-validation';
import type { CompletionKind } from './completion-front';
import { normalizeChunk, normalizeCompletion } from './normalize';

export const CHAT_OP_NAME = FRONT_OP_NAMES.chat;

/** `POST /v1/chat/completions[/]`: messages in, a chat.completion (or its chunks) out. */
export const chatCompletionKind: CompletionKind<ChatCompletionReq> = {
  kind: 'chat',
  opName: CHAT_OP_NAME,
  idPrefix: 'chatcmpl',
  chunkObject: 'chat.completion.chunk',
  path: '/chat/completions',
  validate: validateChatRequest,
  validateSampling,
  normalizeWhole: normalizeCompletion,
  normalizeChunk,
  aggregator: (model) => new StreamAggregator(model),
};
