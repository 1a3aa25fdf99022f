//! How the aggregate gateway names what several servers offer, and how a
//! name a client sends finds its server again.
//!
//! - Tools: the manager's sanitized names (`mcp_<server>_<tool>`, see `naming`).
//! - Prompts: the same scheme over (server, prompt name).
//! - Resource URIs: `switchboard://<server>/<original URI>`, the original
//!   verbatim after the server's segment, so the mapping is reversible by
//!   cutting the prefix, and a resource template keeps its `{variables}`
//!   (`switchboard://fx/fixture://item/{id}` expands to a URI that maps back
//!   to `fixture://item/42`). A server name with a character outside
//!   `[A-Za-z0-9_.~-]` is percent-encoded in its segment.
//!
//! The one-server endpoints (`/mcp/<server>`, `serve --server`) use none of
//! this: names and URIs are the server's own.

use rmcp::model::{CallToolResult, ContentBlock};

pub const URI_PREFIX: &str = "switchboard://";

/// The gateway URI of `uri` on `server`.
pub fn wrap_uri(server: &str, uri: &str) -> String {
    let mut out = String::with_capacity(URI_PREFIX.len() + server.len() + 1 + uri.len());
    out.push_str(URI_PREFIX);
    for b in server.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out.push('/');
    out.push_str(uri);
    out
}

/// The server and original URI behind a gateway URI.
pub fn unwrap_uri(uri: &str) -> Option<(String, &str)> {
    let rest = uri
        .get(..URI_PREFIX.len())
        .filter(|p| p.eq_ignore_ascii_case(URI_PREFIX))
        .map(|_| &uri[URI_PREFIX.len()..])?;
    let (server, original) = rest.split_once('/')?;
    if server.is_empty() {
        return None;
    }
    Some((percent_decode(server)?, original))
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Resource links and embedded resources in a tool result point at gateway
/// URIs, so a client can read them through the gateway.
pub fn wrap_result_uris(server: &str, result: &mut CallToolResult) {
    if !result
        .content
        .iter()
        .any(|c| matches!(c, ContentBlock::Resource(_) | ContentBlock::ResourceLink(_)))
    {
        return;
    }
    for c in result.content.iter_mut() {
        if !matches!(c, ContentBlock::Resource(_) | ContentBlock::ResourceLink(_)) {
            continue;
        }
        let Ok(mut v) = serde_json::to_value(&*c) else {
            continue;
        };
        wrap_uri_fields(server, &mut v);
        if let Ok(back) = serde_json::from_value(v) {
            *c = back;
        }
    }
}

/// `uri` fields of a content item or resource contents (one level deep and
/// inside `resource`).
pub fn wrap_uri_fields(server: &str, v: &mut serde_json::Value) {
    if let Some(u) = v.get("uri").and_then(|u| u.as_str()).map(String::from) {
        v["uri"] = serde_json::Value::String(wrap_uri(server, &u));
    }
    if let Some(r) = v.get_mut("resource") {
        if let Some(u) = r.get("uri").and_then(|u| u.as_str()).map(String::from) {
            r["uri"] = serde_json::Value::String(wrap_uri(server, &u));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_map_back_exactly() {
        for (server, uri) in [
            ("fx", "fixture://greeting"),
            ("my server", "file:///a b?x=1#y"),
            ("a.b-c_d", "https://h/p/{id}"),
            ("ü", "x:"),
        ] {
            let w = wrap_uri(server, uri);
            assert!(w.starts_with(URI_PREFIX), "{w}");
            assert_eq!(unwrap_uri(&w), Some((server.to_string(), uri)), "{w}");
        }
        assert_eq!(
            wrap_uri("fx", "fixture://item/{id}"),
            "switchboard://fx/fixture://item/{id}"
        );
        assert_eq!(
            unwrap_uri("SWITCHBOARD://fx/fixture://item/7"),
            Some(("fx".to_string(), "fixture://item/7"))
        );
        assert_eq!(unwrap_uri("fixture://greeting"), None);
        assert_eq!(unwrap_uri("switchboard:///x"), None);
        assert_eq!(unwrap_uri("switchboard://fx"), None);
    }
}
