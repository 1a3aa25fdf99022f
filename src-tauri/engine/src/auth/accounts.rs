//! The signed-in accounts view (issue 17): every sign-in Switchboard holds
//! for the servers it knows, described without anything secret, and what a
//! server's `insufficient_scope` answer asks for before the browser opens again.

use serde::Serialize;

use super::keepalive;
use super::vault::Vault;
use crate::config::{ServerDef, Transport};

/// One stored sign-in. No token, secret or client secret is in here.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Account {
    /// The server (keychain record) the sign-in belongs to.
    pub server: String,
    /// The URL it was made for.
    pub resource: String,
    /// The authorization server that issued it.
    pub issuer: Option<String>,
    pub client_id: String,
    pub scopes: Vec<String>,
    /// Seconds since 1970.
    pub signed_in_at: Option<u64>,
    /// When the current access token expires (seconds since 1970).
    pub expires_at: Option<u64>,
    pub has_refresh_token: bool,
    /// The servers that use it (the server itself, stdio servers naming it
    /// as `auth.credentialId`).
    pub used_by: Vec<String>,
}

/// The sign-ins stored for `servers` (name, definition).
pub async fn list(servers: &[(String, ServerDef)], vault: &Vault) -> Vec<Account> {
    let mut out = vec![];
    for (name, def) in servers {
        let Ok(Some(rec)) = super::oauth::read_record_blocking(vault, name).await else {
            continue;
        };
        if !rec.has_tokens() {
            continue;
        }
        let c = rec.credentials.as_ref().expect("has tokens");
        let mut used_by = vec![];
        if def.transport != Transport::Stdio {
            used_by.push(name.clone());
        }
        for (other, d) in servers {
            if d.transport == Transport::Stdio
                && d.auth.as_ref().is_some_and(|a| {
                    a.kind == "oauth" && a.credential_id.as_deref().unwrap_or(other) == name
                })
            {
                used_by.push(other.clone());
            }
        }
        out.push(Account {
            server: name.clone(),
            resource: rec.resource.clone(),
            issuer: rec.issuer().map(str::to_string),
            client_id: c.client_id.clone(),
            scopes: c.granted_scopes.clone(),
            signed_in_at: rec.signed_in_at.or(c.token_received_at),
            expires_at: keepalive::expires_at(&rec),
            has_refresh_token: keepalive::has_refresh_token(&rec),
            used_by,
        });
    }
    out
}

/// What a server's 403 `insufficient_scope` challenge asks for.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StepUp {
    pub scopes: Vec<String>,
    /// The server's own words (`error_description`), if it gave any.
    pub reason: Option<String>,
}

impl StepUp {
    /// From a `WWW-Authenticate` header; `None` unless it is `insufficient_scope`.
    pub fn from_challenge(header: &str) -> Option<StepUp> {
        let param = |key: &str| -> Option<String> {
            let at = header.find(&format!("{key}="))? + key.len() + 1;
            let rest = &header[at..];
            Some(match rest.strip_prefix('"') {
                Some(q) => q.split('"').next()?.to_string(),
                None => rest.split([',', ' ']).next()?.to_string(),
            })
        };
        (param("error")? == "insufficient_scope").then_some(())?;
        // Control characters a server put in its text are not shown.
        let reason = param("error_description")
            .map(|d| d.chars().filter(|c| !c.is_control()).take(300).collect());
        Some(StepUp {
            scopes: param("scope")
                .map(|s| s.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default(),
            reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_up_reads_scopes_and_reason() {
        let s = StepUp::from_challenge(r#"Bearer error="insufficient_scope", scope="files:read files:write", error_description="Writing needs files:write""#).unwrap();
        assert_eq!(s.scopes, ["files:read", "files:write"]);
        assert_eq!(s.reason.as_deref(), Some("Writing needs files:write"));
        assert_eq!(
            StepUp::from_challenge(r#"Bearer error="invalid_token", scope="x""#),
            None
        );
        assert_eq!(
            StepUp::from_challenge(
                r#"Bearer resource_metadata="https://x/.well-known/oauth-protected-resource""#
            ),
            None
        );
    }
}
