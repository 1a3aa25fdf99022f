"""A real Python MCP SDK client for tests/gateway_python.rs.

Connects to an MCP server (`stdio COMMAND ARGS...` or `http URL TOKEN`),
runs the same requests against a fixture server's tools, resources and
prompts, and prints one JSON object with what it got, names and URIs taken
back to the fixture's own (`--tool-prefix`, `--uri-prefix`), so the test can
compare a connection through Switchboard's gateway with a direct one.
"""

import argparse
import json
import os
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


# Result fields that depend on the negotiated protocol version (2026-07-28
# cache hints), not on the server's answer.
ENVELOPE = ("resultType", "cacheScope", "ttlMs")


def dump(x):
    d = x.model_dump(mode="json", by_alias=True, exclude_none=True)
    for k in ENVELOPE:
        d.pop(k, None)
    return d


def strip(s, prefix):
    return s[len(prefix):] if prefix and s.startswith(prefix) else s


async def scenario(session, tp, up, pp):
    out = {}
    init = await session.initialize()
    out["serverName"] = init.server_info.name
    tools = (await session.list_tools()).tools
    mine = [dump(t) for t in tools if t.name.startswith(tp) and strip(t.name, tp) in ("echo", "add", "fail", "sleep", "stats")]
    for t in mine:
        t["name"] = strip(t["name"], tp)
    out["tools"] = sorted(mine, key=lambda t: t["name"])
    out["add"] = dump(await session.call_tool(tp + "add", {"a": 2, "b": 40}))
    out["echo"] = dump(await session.call_tool(tp + "echo", {"text": "hi there"}))
    out["fail"] = dump(await session.call_tool(tp + "fail", {}))
    try:
        await session.call_tool(tp + "sleep", {})
        out["sleepError"] = None
    except Exception as e:  # the server's own JSON-RPC error
        out["sleepError"] = str(e)
    # Cancel a long call from the client side; the server must see it
    # (`cancelled` counts for the whole server process: report the change).
    before = (await session.call_tool(tp + "stats", {})).structured_content["cancelled"]
    with anyio.move_on_after(0.5):
        await session.call_tool(tp + "sleep", {"ms": 60000})
    deadline = time.monotonic() + 15
    cancelled = 0
    while time.monotonic() < deadline:
        stats = await session.call_tool(tp + "stats", {})
        cancelled = stats.structured_content["cancelled"] - before
        if cancelled >= 1:
            break
        await anyio.sleep(0.02)
    out["cancelled"] = cancelled
    resources = (await session.list_resources()).resources
    out["resources"] = sorted(strip(str(r.uri), up) for r in resources if str(r.uri).startswith(up))
    templates = (await session.list_resource_templates()).resource_templates
    out["templates"] = sorted(strip(t.uri_template, up) for t in templates if t.uri_template.startswith(up))
    read = dump(await session.read_resource(up + "fixture://greeting"))
    for c in read["contents"]:
        c["uri"] = strip(c["uri"], up)
    out["read"] = read
    item = dump(await session.read_resource(up + "fixture://item/42"))
    for c in item["contents"]:
        c["uri"] = strip(c["uri"], up)
    out["item"] = item
    prompts = (await session.list_prompts()).prompts
    out["prompts"] = sorted(strip(p.name, pp) for p in prompts if p.name.startswith(pp))
    out["prompt"] = dump(await session.get_prompt(pp + "greet", {"name": "Ada"}))
    return out


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool-prefix", default="")
    ap.add_argument("--uri-prefix", default="")
    ap.add_argument("--prompt-prefix", default="")
    ap.add_argument("mode", choices=["stdio", "http"])
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.mode == "stdio":
        params = StdioServerParameters(command=a.rest[0], args=a.rest[1:], env=dict(os.environ))
        async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w):
            async with ClientSession(r, w) as s:
                out = await scenario(s, a.tool_prefix, a.uri_prefix, a.prompt_prefix)
    else:
        url, token = a.rest
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http:
            async with streamable_http_client(url, http_client=http) as (r, w, *_):
                async with ClientSession(r, w) as s:
                    out = await scenario(s, a.tool_prefix, a.uri_prefix, a.prompt_prefix)
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    anyio.run(main)
