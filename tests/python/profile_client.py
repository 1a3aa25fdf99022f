"""A real Python MCP SDK client for tests/gateway_python.rs's profile test.

Connects to the gateway over streamable HTTP (`URL TOKEN`, e.g. the
`/mcp/p/<profile>` endpoint), prints one JSON line with the tool names it
lists, then waits (at most 60 s) for `notifications/tools/list_changed`,
lists again and prints a second line. The test changes the profile between
the two lines.
"""

import json
import sys

import anyio
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def is_tools_changed(message):
    root = getattr(message, "root", message)
    return isinstance(root, types.ToolListChangedNotification) or (
        getattr(root, "method", None) == "notifications/tools/list_changed"
    )


async def main():
    url, token = sys.argv[1], sys.argv[2]
    changed = anyio.Event()

    async def on_message(message):
        if is_tools_changed(message):
            changed.set()

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        async with streamable_http_client(url, http_client=http) as (r, w, *_):
            async with ClientSession(r, w, message_handler=on_message) as s:
                await s.initialize()
                first = sorted(t.name for t in (await s.list_tools()).tools)
                print(json.dumps({"tools": first}), flush=True)
                with anyio.fail_after(60):
                    await changed.wait()
                second = sorted(t.name for t in (await s.list_tools()).tools)
                print(json.dumps({"tools": second}), flush=True)


if __name__ == "__main__":
    anyio.run(main)
