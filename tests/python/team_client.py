"""A real Python MCP SDK client of the team gateway (tests/team_gateway.rs).

`session URL TOKEN N [pause]`: one whole client session over streamable HTTP
with a bearer token (through the test's round-robin proxy, so requests land
on different replicas): initialize, list the tools, then N calls of the echo
tool and one of add. Prints one JSON line: the tool names, the echoed texts,
the sum, and the session id the server gave (none: the gateway is stateless).
With `pause`, after the N calls it prints `{"paused": N}`, waits for a line
on stdin (the test stops a replica meanwhile) and makes N more calls in the
same session before the add.

`oauth URL`: signs in the way an MCP client does (MCP authorization
2025-11-25) with the SDK's own OAuth client: a 401 from the gateway, its
protected resource metadata, the identity provider's metadata, dynamic
client registration, authorization code with PKCE, the token for the
gateway's resource. The "browser" is an HTTP GET of the authorization URL:
the test's identity provider approves at once and redirects with the code.
Prints one JSON line with the tool names the signed-in person sees.
"""

import json
import sys
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT = "http://127.0.0.1:3999/callback"


def echo_tool(names):
    return next(n for n in names if n.endswith("_echo"))


def add_tool(names):
    return next(n for n in names if n.endswith("_add"))


async def session(url, token, n, pause=False):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        async with streamable_http_client(url, http_client=http) as (r, w, *rest):
            async with ClientSession(r, w) as s:
                await s.initialize()
                names = sorted(t.name for t in (await s.list_tools()).tools)
                echoed = []
                for i in range(n):
                    res = await s.call_tool(echo_tool(names), {"text": f"call {i}"})
                    echoed.append(res.content[0].text)
                if pause:
                    # The test takes a replica away here, then says go on.
                    print(json.dumps({"paused": len(echoed)}), flush=True)
                    await anyio.to_thread.run_sync(sys.stdin.readline)
                    for i in range(n, 2 * n):
                        res = await s.call_tool(echo_tool(names), {"text": f"call {i}"})
                        echoed.append(res.content[0].text)
                res = await s.call_tool(add_tool(names), {"a": 2, "b": 40})
                session_id = rest[0]() if rest and callable(rest[0]) else None
                print(
                    json.dumps(
                        {
                            "tools": names,
                            "echoed": echoed,
                            "sum": res.structured_content,
                            "sessionId": session_id,
                        }
                    ),
                    flush=True,
                )


class Memory:
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info: OAuthClientInformationFull):
        self.client = info


async def oauth(url):
    redirected = {}

    async def open_browser(authorization_url):
        # The identity provider approves at once: its answer is the redirect.
        async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as c:
            r = await c.get(authorization_url)
        if r.status_code not in (302, 303):
            raise RuntimeError(f"authorize answered {r.status_code}: {r.text}")
        q = parse_qs(urlparse(r.headers["location"]).query)
        redirected.update({k: v[0] for k, v in q.items()})

    async def callback():
        return AuthorizationCodeResult(
            code=redirected["code"],
            state=redirected.get("state"),
            iss=redirected.get("iss"),
        )

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="team-gateway test",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=Memory(),
        redirect_handler=open_browser,
        callback_handler=callback,
    )
    http = create_mcp_http_client(auth=provider)
    async with http:
        async with streamable_http_client(url, http_client=http) as (r, w, *_):
            async with ClientSession(r, w) as s:
                await s.initialize()
                names = sorted(t.name for t in (await s.list_tools()).tools)
                res = await s.call_tool(echo_tool(names), {"text": "signed in"})
                print(
                    json.dumps({"tools": names, "echoed": res.content[0].text}),
                    flush=True,
                )


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "session":
        pause = len(sys.argv) > 5 and sys.argv[5] == "pause"
        anyio.run(session, sys.argv[2], sys.argv[3], int(sys.argv[4]), pause)
    elif mode == "oauth":
        anyio.run(oauth, sys.argv[2])
    else:
        sys.exit(f"unknown mode {mode}")
