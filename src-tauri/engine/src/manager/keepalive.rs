//! The refresh timer (issue 17): every sign-in a wanted server uses is
//! refreshed ahead of its expiry even while the server is idle, not only on
//! use. A refresh that cannot reach the authorization server is retried
//! with backoff and keeps the sign-in; only an `invalid_grant` answer ends
//! it, and then the servers using it reconnect and show `needs-auth`.
//!
//! The timer wakes at least every [`MAX_NAP`] and compares with the wall
//! clock, so after the machine sleeps a due refresh runs at once.

use std::collections::HashMap;
use std::time::Duration;

use crate::auth::keepalive::{self, Refresh};
use crate::config::Transport;

use super::Manager;

/// The longest the timer sleeps between looks at the wall clock.
const MAX_NAP: Duration = Duration::from_secs(15);

impl Manager {
    /// Start the refresh timer (once per manager; it ends at shutdown).
    pub(super) fn start_keepalive(&self) {
        if self
            .shared
            .keepalive_started
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let me = self.clone();
        let closing = self.shared.closing.clone();
        self.shared.background.spawn(async move {
            tokio::select! {
                _ = me.keepalive_loop() => {}
                _ = closing.cancelled() => {}
            }
        });
    }

    /// The record each wanted server's sign-in is kept under, and the
    /// servers using it: a remote server's own; a stdio server's
    /// `auth.credentialId` (or its own name).
    fn sign_in_users(&self) -> HashMap<String, Vec<String>> {
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        for name in self.server_names() {
            let Some(def) = self.server_def(&name) else {
                continue;
            };
            let record = match def.transport {
                Transport::Http | Transport::Sse => Some(name.clone()),
                Transport::Stdio => def
                    .auth
                    .as_ref()
                    .filter(|a| a.kind == "oauth")
                    .map(|a| a.credential_id.clone().unwrap_or_else(|| name.clone())),
            };
            if let Some(r) = record {
                out.entry(r).or_default().push(name);
            }
        }
        out
    }

    async fn keepalive_loop(&self) {
        // Per record: failed attempts so far and when to try again.
        let mut retry: HashMap<String, (u32, u64)> = HashMap::new();
        // A fixed jitter per record, so its due time does not move between looks.
        let mut jitter: HashMap<String, f64> = HashMap::new();
        loop {
            let mut nap = MAX_NAP.as_secs();
            if let Some(vault) = self.vault() {
                for (record, users) in self.sign_in_users() {
                    let now = keepalive::now();
                    let rec = match crate::auth::oauth::read_record_blocking(&vault, &record).await
                    {
                        Ok(Some(r)) if r.has_tokens() => r,
                        _ => {
                            retry.remove(&record);
                            continue;
                        }
                    };
                    let j = *jitter.entry(record.clone()).or_insert_with(rand_unit);
                    let Some(mut due) = keepalive::refresh_at(&rec, j) else {
                        continue;
                    };
                    if let Some((_, at)) = retry.get(&record) {
                        due = *at;
                    }
                    if due > now {
                        nap = nap.min(due - now);
                        continue;
                    }
                    let who = users.first().cloned().unwrap_or_else(|| record.clone());
                    match keepalive::refresh(&record, &vault).await {
                        Refresh::Refreshed => {
                            retry.remove(&record);
                            jitter.remove(&record);
                            self.note(&who, "refreshed the sign-in ahead of its expiry");
                        }
                        Refresh::Nothing => {
                            retry.remove(&record);
                        }
                        Refresh::Unreachable(why) => {
                            let attempt = retry.get(&record).map_or(1, |(n, _)| n + 1);
                            let wait = keepalive::retry_after(attempt);
                            retry.insert(record.clone(), (attempt, keepalive::now() + wait));
                            nap = nap.min(wait);
                            self.note(&who, &format!("could not refresh the sign-in ({}); trying again in {wait} s, the sign-in is kept", self.redact(&who, &why)));
                        }
                        Refresh::Rejected(why) => {
                            retry.remove(&record);
                            self.note(&who, &format!("the authorization server refused to refresh the sign-in ({}); sign in again", self.redact(&who, &why)));
                            for name in users {
                                let _ = self.restart(&name).await;
                            }
                        }
                    }
                }
            }
            tokio::time::sleep(Duration::from_secs(nap.max(1))).await;
        }
    }
}

/// A number in [0, 1) that differs between records and runs.
fn rand_unit() -> f64 {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        return 0.5;
    }
    (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
}
