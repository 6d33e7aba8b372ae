"""Sends one large JSON body to weft with a stock Python client and prints what it read.

Usage: refusal.py <http.client|requests|httpx> <url> <bytes> <authorization>
Prints one JSON document: {"status": int, "retry_after": str|null} or {"error": "<type>: <message>"}.
"""
import json
import sys
from urllib.parse import urlsplit

client, url, size, authorization = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
body = b'{"start": "' + b" " * (size - 13) + b'"}'
headers = {"Content-Type": "application/json", "Authorization": authorization}

try:
    if client == "http.client":
        import http.client

        parts = urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        conn.request("POST", parts.path, body=body, headers=headers)
        r = conn.getresponse()
        r.read()
        result = {"status": r.status, "retry_after": r.getheader("Retry-After")}
    elif client == "requests":
        import requests

        r = requests.post(url, data=body, headers=headers, timeout=60)
        result = {"status": r.status_code, "retry_after": r.headers.get("Retry-After")}
    elif client == "httpx":
        import httpx

        r = httpx.post(url, content=body, headers=headers, timeout=60)
        result = {"status": r.status_code, "retry_after": r.headers.get("Retry-After")}
    else:
        raise SystemExit(f"unknown client {client}")
except Exception as e:  # the failure itself is the result under test
    result = {"error": f"{type(e).__name__}: {e}"}
print(json.dumps(result))
