"""A real Python MCP SDK client for tests/gateway_python.rs's journal test.

Connects to the gateway (`stdio COMMAND ARGS...` or `http URL TOKEN`) and
makes one of each request the call journal records: `tools/call` (an echo
whose text carries `SECRET`, an add, a tool that fails), `resources/read`
and `prompts/get`, on the fixture server `fx`. Prints the echo's text.
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def calls(s, secret):
    await s.initialize()
    echo = await s.call_tool("mcp_fx_echo", {"text": f"my key is {secret}"})
    await s.call_tool("mcp_fx_add", {"a": 2, "b": 40})
    await s.call_tool("mcp_fx_fail", {})
    await s.read_resource("switchboard://fx/fixture://greeting")
    await s.get_prompt("mcp_fx_greet", {"name": "Ada"})
    return "\n".join(getattr(c, "text", "") for c in echo.content)


async def main():
    mode, rest = sys.argv[1], sys.argv[2:]
    secret = os.environ["JOURNAL_SECRET"]
    if mode == "stdio":
        params = StdioServerParameters(command=rest[0], args=rest[1:], env=dict(os.environ))
        async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w):
            async with ClientSession(r, w) as s:
                text = await calls(s, secret)
    else:
        url, token = rest
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http:
            async with streamable_http_client(url, http_client=http) as (r, w, *_):
                async with ClientSession(r, w) as s:
                    text = await calls(s, secret)
    print(json.dumps({"echo": text}), flush=True)


if __name__ == "__main__":
    anyio.run(main)
