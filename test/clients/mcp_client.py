"""The official Python MCP client (`mcp`, pinned in test/helpers/python-clients.ts) against weft's /mcp.

Usage: mcp_client.py <url of /mcp> <api key>, with a JSON list of [tool, arguments] pairs on stdin.
Connects over Streamable HTTP with the key as Bearer, lists the tools, calls each pair in order and
prints one JSON document: the tools' names and each call's isError and text.
"""

import asyncio
import json
import sys

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main() -> None:
    url, key = sys.argv[1], sys.argv[2]
    calls = json.loads(sys.stdin.read())
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with http, streamable_http_client(url, http_client=http) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            results = []
            for name, arguments in calls:
                r = await session.call_tool(name, arguments)
                text = "".join(c.text for c in r.content if getattr(c, "type", None) == "text")
                results.append({"name": name, "is_error": bool(r.is_error), "text": text})
            print(
                json.dumps(
                    {
                        "server": init.server_info.name,
                        "protocol": init.protocol_version,
                        "tools": [t.name for t in tools.tools],
                        "results": results,
                    }
                ),
                flush=True,
            )


asyncio.run(main())
