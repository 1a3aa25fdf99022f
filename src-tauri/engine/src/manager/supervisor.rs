//! One task per server: connections, restarts with backoff, giving up.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::doctor::{self, Failure};
use crate::events::ServerStatus;

use super::{Manager, Slot};

/// How one connection ended.
pub(super) enum Outcome {
    /// Stopped on purpose: never restarted.
    Stopped,
    NeedsAuth(String),
    Failed {
        failure: Failure,
        healthy_for: Duration,
    },
}

/// Delay before restart `attempt` (1-based): initial × multiplier^(n-1), capped.
pub fn backoff(p: &crate::config::RestartPolicy, attempt: u32) -> Duration {
    let factor = p
        .backoff_multiplier
        .max(1.0)
        .powi(attempt.saturating_sub(1).min(64) as i32);
    let ms = (p.initial_delay_ms as f64 * factor).min(p.max_delay_ms as f64);
    Duration::from_millis(ms as u64)
}

impl Manager {
    /// Supervise one server (SPEC M9): run connections, restart crashed or
    /// failed ones with exponential backoff, give up after the policy's
    /// attempts. Each server has its own task, so one crash loop never
    /// delays another server or a status read.
    pub(super) async fn supervise(&self, slot: Arc<Slot>, stop: CancellationToken) {
        let policy = slot.wanted.def.restart_policy.unwrap_or_default();
        let mut attempt: u32 = 0;
        loop {
            let outcome = self.run_once(&slot, &stop, attempt).await;
            let (failure, healthy_for) = match outcome {
                Outcome::Stopped => return self.set_status(&slot, ServerStatus::Disconnected),
                Outcome::NeedsAuth(message) => {
                    let diagnosis = doctor::diagnose(
                        &Failure::Auth {
                            message: message.clone(),
                        },
                        &self.facts(&slot),
                    );
                    slot.state.lock().unwrap().diagnosis = Some(diagnosis);
                    return self.set_status(&slot, ServerStatus::NeedsAuth { message });
                }
                Outcome::Failed {
                    failure,
                    healthy_for,
                } => (failure, healthy_for),
            };
            if healthy_for >= self.shared.opts.healthy_after {
                attempt = 0;
            }
            attempt += 1;
            let mut diagnosis = doctor::diagnose(&failure, &self.facts(&slot));
            for text in [
                &mut diagnosis.summary,
                &mut diagnosis.detail,
                &mut diagnosis.error,
            ] {
                *text = slot.log.redactor.apply(text);
            }
            let error = diagnosis.error.clone();
            let heals = diagnosis.class.heals();
            {
                let mut st = slot.state.lock().unwrap();
                st.last_error = Some(error.clone());
                st.diagnosis = Some(diagnosis);
            }
            // Starting again cannot help (no such command, not a program, no
            // such folder, an unusable definition): failed now, no restarts.
            if !heals {
                slot.log.now(
                    "lifecycle",
                    &format!("{error}; not restarting: this does not heal by retrying"),
                );
                return self.set_status(&slot, ServerStatus::Failed { error });
            }
            if attempt > policy.max_restart_attempts {
                let error = if policy.max_restart_attempts == 0 {
                    error
                } else {
                    format!(
                        "{error} (gave up after {} restarts)",
                        policy.max_restart_attempts
                    )
                };
                return self.set_status(&slot, ServerStatus::Failed { error });
            }
            let delay = backoff(&policy, attempt);
            slot.log.now(
                "lifecycle",
                &format!("{error}; restarting in {} ms", delay.as_millis()),
            );
            slot.state.lock().unwrap().restarts += 1;
            self.set_status(
                &slot,
                ServerStatus::Restarting {
                    attempt,
                    of: policy.max_restart_attempts,
                },
            );
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = stop.cancelled() => return self.set_status(&slot, ServerStatus::Disconnected),
            }
        }
    }

    /// What a diagnosis of `slot`'s failure starts from: its definition,
    /// its last stderr lines of this start, text on its stdout, values that
    /// resolved to nothing.
    pub(super) fn facts(&self, slot: &Slot) -> doctor::Facts {
        let def = &slot.wanted.def;
        let log = slot.log.snapshot();
        let since = log
            .iter()
            .rposition(|l| l.kind == "lifecycle" && l.text.starts_with("starting "))
            .map_or(0, |i| i + 1);
        let stderr: Vec<String> = log[since..]
            .iter()
            .filter(|l| l.kind == "stderr")
            .map(|l| l.text.clone())
            .collect();
        let st = slot.state.lock().unwrap();
        let unresolved = st
            .warnings
            .iter()
            .filter(|w| w.contains("resolved to nothing") || w.contains("needs input"))
            .filter_map(|w| {
                w.split_whitespace()
                    .nth(1)
                    .map(|n| n.trim_end_matches(',').to_string())
            })
            .collect();
        doctor::Facts {
            os: Some(doctor::this_os()),
            transport: Some(def.transport),
            command: def.command.clone(),
            args: def.args.clone(),
            url: def.url.clone(),
            timeout: Some(
                def.timeout
                    .map(Duration::from_millis)
                    .unwrap_or(self.shared.opts.default_timeout),
            ),
            stderr_tail: stderr[stderr.len().saturating_sub(5)..].to_vec(),
            stdout_noise: st.stdout_noise.clone(),
            unresolved,
        }
    }
}
