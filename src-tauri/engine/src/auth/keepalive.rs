//! Sign-ins that stay alive: when a stored access token is due for a
//! refresh (ahead of its expiry, with jitter so many sign-ins made at once
//! do not refresh at once), and one refresh of a stored sign-in, with its
//! outcome sorted into "refreshed", "try again later" (the network or the
//! authorization server is away: the sign-in is kept) and "rejected" (an
//! `invalid_grant` answer: the tokens are gone, the user must sign in again).
//!
//! The timer that calls these lives with the servers (`manager::keepalive`).
//! rmcp also refreshes on use when a token is about to expire, by the wall
//! clock, so a machine waking from sleep refreshes before its next request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::transport::auth::AuthError;

use super::oauth::{now_secs, read_record_blocking, stored_manager_for};
use super::vault::{OAuthRecord, Vault};

/// How long one refresh may take before it counts as a network failure.
pub const REFRESH_TIMEOUT: Duration = Duration::from_secs(30);

/// How long before expiry a token of `lifetime` seconds is refreshed: a
/// quarter of its life, at least half of it up to two minutes (a 60-second
/// token at 30 s, an hour's token 15 minutes ahead).
pub fn margin(lifetime: u64) -> u64 {
    (lifetime / 4).max((lifetime / 2).min(120))
}

/// When (seconds since 1970) the record's access token should be refreshed;
/// `None` when it cannot be (no refresh token, no expiry known). `jitter`
/// in [0, 1) moves it earlier by up to a fifth of the margin.
pub fn refresh_at(rec: &OAuthRecord, jitter: f64) -> Option<u64> {
    if !has_refresh_token(rec) {
        return None;
    }
    let lifetime = lifetime(rec)?;
    let received = rec.credentials.as_ref()?.token_received_at?;
    let m = margin(lifetime);
    let early = (m as f64 / 5.0 * jitter.clamp(0.0, 0.999)) as u64;
    Some((received + lifetime).saturating_sub(m + early))
}

/// When the record's access token expires (seconds since 1970), if known.
pub fn expires_at(rec: &OAuthRecord) -> Option<u64> {
    Some(rec.credentials.as_ref()?.token_received_at? + lifetime(rec)?)
}

/// A field of the stored token response, as JSON (nothing is copied out
/// but what is asked for).
fn token_field(rec: &OAuthRecord, key: &str) -> Option<serde_json::Value> {
    let t = rec.credentials.as_ref()?.token_response.as_ref()?;
    serde_json::to_value(t).ok()?.get(key).cloned()
}

/// The access token's lifetime in seconds (`expires_in`), if the server said.
pub fn lifetime(rec: &OAuthRecord) -> Option<u64> {
    token_field(rec, "expires_in")?.as_u64()
}

/// Whether the sign-in holds a refresh token.
pub fn has_refresh_token(rec: &OAuthRecord) -> bool {
    token_field(rec, "refresh_token").is_some_and(|v| v.as_str().is_some_and(|s| !s.is_empty()))
}

/// How one refresh went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refresh {
    Refreshed,
    /// Nothing to refresh (signed out meanwhile, no refresh token).
    Nothing,
    /// Could not reach the authorization server or it failed: try again
    /// later; the sign-in is kept.
    Unreachable(String),
    /// The authorization server refused the refresh token (`invalid_grant`):
    /// the tokens were dropped (the client registration kept).
    Rejected(String),
}

/// One refresh in flight per authorization server (issuer), across servers.
fn issuer_lock(issuer: &str) -> Arc<tokio::sync::Mutex<()>> {
    static LOCKS: Mutex<Option<HashMap<String, Arc<tokio::sync::Mutex<()>>>>> = Mutex::new(None);
    LOCKS
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .entry(issuer.to_string())
        .or_default()
        .clone()
}

/// Refresh `server`'s stored sign-in now.
pub async fn refresh(server: &str, vault: &Vault) -> Refresh {
    let rec = match read_record_blocking(vault, server).await {
        Ok(Some(r)) if r.has_tokens() => r,
        Ok(_) => return Refresh::Nothing,
        Err(e) => return Refresh::Unreachable(e.to_string()),
    };
    let lock = issuer_lock(rec.issuer().unwrap_or(&rec.resource));
    let _one = lock.lock().await;
    let run = async {
        let m = match stored_manager_for(server, &rec, vault).await {
            Ok(Some(m)) => m,
            Ok(None) => return Refresh::Nothing,
            Err(e) => return Refresh::Unreachable(e),
        };
        match m.refresh_token().await {
            Ok(_) => Refresh::Refreshed,
            Err(e @ AuthError::TokenRefreshRejected(_)) => Refresh::Rejected(e.to_string()),
            // No refresh token (or another client's): nothing a retry mends.
            Err(AuthError::AuthorizationRequired) => Refresh::Nothing,
            Err(e) => Refresh::Unreachable(e.to_string()),
        }
    };
    match tokio::time::timeout(REFRESH_TIMEOUT, run).await {
        Ok(r) => r,
        Err(_) => Refresh::Unreachable(format!(
            "the authorization server did not answer within {} s",
            REFRESH_TIMEOUT.as_secs()
        )),
    }
}

/// Seconds to wait before retry number `attempt` (from 1) of a refresh that
/// could not reach the server: 5, 10, 20, … up to 5 minutes.
pub fn retry_after(attempt: u32) -> u64 {
    (5u64 << attempt.saturating_sub(1).min(6)).min(300)
}

/// Seconds since 1970, for callers that schedule with [`refresh_at`].
pub fn now() -> u64 {
    now_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margins_and_retries() {
        assert_eq!(margin(60), 30);
        assert_eq!(margin(3600), 900);
        assert_eq!(margin(300), 120);
        assert_eq!([1, 2, 3, 7, 20].map(retry_after), [5, 10, 20, 300, 300]);
    }
}
