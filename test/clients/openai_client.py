"""Drives weft's /v1 routes with the stock OpenAI Python SDK, as a user would.

Usage: openai_client.py <base_url ending in /v1> <api key> <project for x-project-id>
Prints one JSON document with what each call returned (or raised); the test asserts on it.
"""
import json
import sys

import openai
from openai import OpenAI

base_url, key, project = sys.argv[1:4]
client = OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=30)
traced = client.with_options(default_headers={"x-project-id": project})
out = {"openai_version": openai.__version__}


def attempt(name, fn):
    try:
        out[name] = {"ok": fn()}
    except openai.APIStatusError as e:
        out[name] = {"error": type(e).__name__, "status": e.status_code, "message": e.message, "body": e.body}


attempt("models_list", lambda: [m.model_dump() for m in client.models.list()])
attempt("models_retrieve", lambda: client.models.retrieve("m-vllm").model_dump())
attempt("models_retrieve_unknown", lambda: client.models.retrieve("no-such-model").model_dump())


def completion():
    raw = traced.completions.with_raw_response.create(model="m-vllm", prompt="Say hi", max_tokens=5)
    return {"completion": raw.parse().model_dump(), "call_id": raw.headers.get("x-svc-call-id")}


attempt("completion", completion)


def completion_stream():
    chunks = list(client.completions.create(model="m-sglang", prompt="Say hi", stream=True, stream_options={"include_usage": True}))
    return [c.model_dump() for c in chunks]


attempt("completion_stream", completion_stream)
attempt("completion_unknown_model", lambda: client.completions.create(model="no-such-model", prompt="x").model_dump())
attempt("completion_bad_logprobs", lambda: client.completions.create(model="m-vllm", prompt="x", logprobs=-3).model_dump())


def embeddings():
    raw = traced.embeddings.with_raw_response.create(model="m-vllm", input=["abc", "hello"])
    res = raw.parse()
    return {"vectors": [d.embedding for d in res.data], "usage": res.usage.model_dump(), "model": res.model, "call_id": raw.headers.get("x-svc-call-id")}


attempt("embeddings", embeddings)
attempt("embeddings_float", lambda: [d.embedding for d in client.embeddings.create(model="m-openai", input="abcd", encoding_format="float").data])


def unknown_path():
    return client.get("/no/such/thing", cast_to=object)


attempt("unknown_path", unknown_path)
attempt("wrong_method", lambda: client.delete("/models", cast_to=object))
print(json.dumps(out))
