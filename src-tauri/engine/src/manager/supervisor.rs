//! One task per server run: connections one after another, restarts with
//! backoff, giving up after the restart policy's attempts.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::doctor::{self, Failure};

use super::state::Phase;
use super::{Manager, Slot};

/// How one connection ended.
pub(super) enum Outcome {
    /// Stopped on purpose (or overtaken by a later operation): never restarted.
    Stopped,
    NeedsAuth {
        message: String,
        challenge: Option<String>,
    },
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
    /// Supervise one run of a server: run connections, restart crashed or
    /// failed ones with exponential backoff, give up after the policy's
    /// attempts. The restart policy (the server's own, else the current
    /// default) is read at every failure. Each server has its own task, so
    /// one crash loop never delays another server or a status read.
    pub(super) async fn supervise(&self, slot: Arc<Slot>, run: u64, stop: CancellationToken) {
        let mut attempt: u32 = 0;
        loop {
            let outcome = self.connect_once(&slot, run, &stop).await;
            let (failure, healthy_for) = match outcome {
                Outcome::Stopped => return,
                Outcome::NeedsAuth { message, challenge } => {
                    let why = doctor::diagnose(
                        &Failure::Auth {
                            message: message.clone(),
                        },
                        &self.facts(&slot),
                    );
                    self.advance(&slot, run, |_| {
                        Some(Phase::NeedsAuth {
                            message,
                            challenge,
                            why,
                        })
                    });
                    return;
                }
                Outcome::Failed {
                    failure,
                    healthy_for,
                } => (failure, healthy_for),
            };
            let policy = self.restart_policy_of(&slot.wanted.def);
            if healthy_for >= self.shared.opts.healthy_after {
                attempt = 0;
            }
            attempt += 1;
            let mut why = doctor::diagnose(&failure, &self.facts(&slot));
            for text in [&mut why.summary, &mut why.detail, &mut why.error] {
                *text = slot.log.redactor.apply(text);
            }
            let error = why.error.clone();
            // Starting again cannot help (no such command, not a program, no
            // such folder, an unusable definition): failed now, no restarts.
            if !why.class.heals() {
                self.advance(&slot, run, |_| {
                    slot.log.now(
                        "lifecycle",
                        &format!("{error}; not restarting: this does not heal by retrying"),
                    );
                    Some(Phase::Failed {
                        error: error.clone(),
                        why,
                    })
                });
                return;
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
                self.advance(&slot, run, |_| Some(Phase::Failed { error, why }));
                return;
            }
            let delay = backoff(&policy, attempt);
            let restarting = self.advance(&slot, run, |rt| {
                slot.log.now(
                    "lifecycle",
                    &format!("{error}; restarting in {} ms", delay.as_millis()),
                );
                rt.restarts += 1;
                Some(Phase::Restarting {
                    attempt,
                    of: policy.max_restart_attempts,
                    why,
                    cached: rt.phase.cached(),
                })
            });
            if !restarting {
                return;
            }
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = stop.cancelled() => return,
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
        let timeout = self.timeout_of(def);
        let rt = slot.rt.lock().unwrap();
        let unresolved = rt
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
            timeout: Some(timeout),
            stderr_tail: stderr[stderr.len().saturating_sub(5)..].to_vec(),
            stdout_noise: rt.stdout_noise.clone(),
            unresolved,
        }
    }
}
