//! Tool calls the UI started and may still cancel, by the id the UI chose.
//! Cancelling one cancels its token; the engine then sends
//! `notifications/cancelled` and the call ends as an abort.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

type Running = Arc<Mutex<HashMap<String, (u64, CancellationToken)>>>;

/// Managed as `tauri::State<ToolCalls>`.
#[derive(Default)]
pub struct ToolCalls {
    next: AtomicU64,
    running: Running,
}

/// A running call's registration; dropping it (the call ended) forgets the id.
pub struct RunningCall {
    id: String,
    generation: u64,
    token: CancellationToken,
    running: Running,
}

impl RunningCall {
    pub fn token(&self) -> CancellationToken {
        self.token.clone()
    }
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        let mut running = self.running.lock().unwrap();
        // A newer call may have reused the id: only forget our own entry.
        if running
            .get(&self.id)
            .is_some_and(|(g, _)| *g == self.generation)
        {
            running.remove(&self.id);
        }
    }
}

impl ToolCalls {
    /// Registers call `id`; `None` (the caller gave no id) cannot be cancelled.
    pub fn start(&self, id: Option<String>) -> Option<RunningCall> {
        let id = id?;
        let generation = self.next.fetch_add(1, Ordering::Relaxed);
        let token = CancellationToken::new();
        self.running
            .lock()
            .unwrap()
            .insert(id.clone(), (generation, token.clone()));
        Some(RunningCall {
            id,
            generation,
            token,
            running: self.running.clone(),
        })
    }

    /// Cancels call `id`; false when no such call is running (it already ended).
    pub fn cancel(&self, id: &str) -> bool {
        let entry = self.running.lock().unwrap().remove(id);
        entry.map(|(_, t)| t.cancel()).is_some()
    }

    /// How many calls are registered right now.
    pub fn running(&self) -> usize {
        self.running.lock().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_reaches_the_calls_token_and_an_ended_call_is_forgotten() {
        let calls = ToolCalls::default();
        let call = calls.start(Some("c1".into())).expect("registered");
        let token = call.token();
        assert_eq!(calls.running(), 1);
        assert!(calls.cancel("c1"), "a running call can be cancelled");
        assert!(token.is_cancelled(), "the call's token is cancelled");
        assert!(!calls.cancel("c1"), "a second cancel finds nothing");
        drop(call);
        assert_eq!(calls.running(), 0);

        let done = calls.start(Some("c2".into())).unwrap();
        drop(done);
        assert!(!calls.cancel("c2"), "an ended call is forgotten");
        assert!(calls.start(None).is_none(), "no id: nothing to register");
    }

    #[test]
    fn an_old_call_ending_keeps_a_newer_call_with_the_same_id() {
        let calls = ToolCalls::default();
        let old = calls.start(Some("same".into())).unwrap();
        let new = calls.start(Some("same".into())).unwrap();
        drop(old);
        assert!(calls.cancel("same"), "the newer call is still registered");
        assert!(new.token().is_cancelled());
    }
}
