"""A new user's project to annotate (test/ui-annotate.test.ts): AnnotationSpecs published with
the Weave SDK, calls of an `answer` op to score and queue, and an LLM call shaped as the SDK's
OpenAI integration records `client.chat.completions.create` (its kwargs as inputs, the
ChatCompletion as output), to replay in the playground.

Environment: WANDB_BASE_URL, WANDB_API_KEY, WEFT_PROJECT. Prints one JSON object: the specs'
refs by name, the answer calls' ids (in call order) and the LLM call's id.
"""

import json
import os

import weave
from weave.flow.annotation_spec import AnnotationSpec

client = weave.init(os.environ["WEFT_PROJECT"])

specs = {
    "quality": AnnotationSpec(
        name="Quality", description="How good the answer is", field_schema={"type": "integer", "minimum": 1, "maximum": 5}
    ),
    "tone": AnnotationSpec(name="Tone", field_schema={"type": "string", "enum": ["friendly", "neutral", "rude"]}),
    "correct": AnnotationSpec(name="Correct", field_schema={"type": "boolean"}),
    "confidence": AnnotationSpec(name="Confidence", field_schema={"type": "number", "minimum": 0, "maximum": 1}),
    "why": AnnotationSpec(name="Why", field_schema={"type": "string", "maxLength": 200}),
}
refs = {name: weave.publish(spec, name=name).uri() for name, spec in specs.items()}


@weave.op
def answer(question: str) -> str:
    return f"The answer to {question!r} is 42."


answer_ids = []
for q in ["life", "the universe", "everything", "tea"]:
    _, call = answer.call(q)
    answer_ids.append(call.id)


@weave.op(name="openai.chat.completions.create")
def create(messages: list, model: str, temperature: float, max_tokens: int) -> dict:
    return {
        "id": "chatcmpl-recorded",
        "object": "chat.completion",
        "created": 1767225600,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "logprobs": None,
                "message": {"role": "assistant", "content": "Paris is the capital of France.", "tool_calls": None},
            }
        ],
        "usage": {"prompt_tokens": 21, "completion_tokens": 7, "total_tokens": 28},
    }


_, llm = create.call(
    messages=[
        {"role": "system", "content": "You answer in one sentence."},
        {"role": "user", "content": "What is the capital of France?"},
    ],
    model="m-small",
    temperature=0.2,
    max_tokens=64,
)
client.flush()
print(json.dumps({"specs": refs, "answer_ids": answer_ids, "llm_call_id": llm.id}), flush=True)
