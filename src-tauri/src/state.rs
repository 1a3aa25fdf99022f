//! What the app keeps for its whole life: the one engine, and the
//! elicitation requests waiting for the user's answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use switchboard_engine::bundle::BundleInstaller;
use switchboard_engine::engine::Engine;
use switchboard_engine::manager::ElicitAnswer;
use tokio::sync::oneshot;

/// Managed as `tauri::State<AppState>`.
pub struct AppState {
    pub engine: Arc<Engine>,
    pub elicitations: Arc<Elicitations>,
    /// `.mcpb` bundles open in install forms (unpacking in the background).
    pub bundles: BundleInstaller,
    /// Set once `engine.shutdown()` ran, so exit paths do it only once.
    pub shut_down: AtomicBool,
}

impl AppState {
    pub fn new(engine: Engine) -> AppState {
        let engine = Arc::new(engine);
        AppState {
            bundles: BundleInstaller::new(engine.clone()),
            engine,
            elicitations: Arc::default(),
            shut_down: AtomicBool::new(false),
        }
    }

    /// Stop every server and wait for their process groups (app exit).
    pub fn shutdown_blocking(&self) {
        if self.shut_down.swap(true, Ordering::SeqCst) {
            return;
        }
        let engine = self.engine.clone();
        tauri::async_runtime::block_on(async move { engine.shutdown().await });
        // What the journal still queues is written before the process ends
        // (waiting a few seconds at most: a journal another program keeps
        // locked does not hold the exit up).
        if let Some(j) = self.engine.manager().journal() {
            j.flush_within(std::time::Duration::from_secs(3));
        }
    }
}

/// Elicitations shown in the UI, by id, each waiting on a oneshot.
#[derive(Default)]
pub struct Elicitations {
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, oneshot::Sender<ElicitAnswer>>>,
}

impl Elicitations {
    /// A new id and the receiver its answer arrives on.
    pub fn open(&self) -> (u64, oneshot::Receiver<ElicitAnswer>) {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let (tx, rx) = oneshot::channel();
        self.waiting.lock().unwrap().insert(id, tx);
        (id, rx)
    }

    /// Forget an id whose request ended without an answer.
    pub fn close(&self, id: u64) {
        self.waiting.lock().unwrap().remove(&id);
    }

    /// Deliver the user's answer; false when nobody waits for `id` any more.
    pub fn answer(&self, id: u64, answer: ElicitAnswer) -> bool {
        match self.waiting.lock().unwrap().remove(&id) {
            Some(tx) => tx.send(answer).is_ok(),
            None => false,
        }
    }
}
