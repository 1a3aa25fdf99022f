//! Logs, warnings and the diagnostic report.

use crate::doctor;
use crate::events::EngineEvent;

use super::{Manager, Slot};

impl Manager {
    /// Publish an event on the manager's channel (the engine's sign-in progress).
    pub fn publish(&self, ev: EngineEvent) {
        let _ = self.shared.events.send(ev);
    }

    /// A lifecycle line in a server's log (and its event).
    pub fn note(&self, name: &str, text: &str) {
        if let Some(slot) = self.slot(name) {
            slot.log.now("lifecycle", text);
        }
    }

    pub(super) fn warn(&self, slot: &Slot, message: &str) {
        let message = &slot.log.redactor.apply(message);
        let _ = self.shared.events.send(EngineEvent::Warning {
            server: slot.name.clone(),
            message: message.into(),
        });
        slot.log.now("warning", message);
        let mut rt = slot.rt.lock().unwrap();
        if !rt.warnings.iter().any(|w| w == message) {
            rt.warnings.push(message.into());
        }
    }

    /// A report on `name` to paste into a bug report or a chat: its
    /// definition (argument values masked where they are secrets; env and
    /// header values never shown), the resolved program and search PATH, its
    /// status and diagnosis, and its last log lines, all through the server's
    /// secret masking.
    pub fn diagnostic_report(&self, name: &str) -> Option<String> {
        let slot = self.slot(name)?;
        let st = self.state(name)?;
        let def = &slot.wanted.def;
        let mask = |t: &str| slot.log.redactor.apply(t);
        let search_path = self.shared.commands.get().map(|c| c.describe_dirs());
        let log: Vec<String> = slot
            .log
            .snapshot()
            .into_iter()
            .rev()
            .take(30)
            .rev()
            .map(|l| format!("[{}] {}", l.kind, mask(&l.text)))
            .collect();
        Some(doctor::report(&doctor::ReportInput {
            name: name.to_string(),
            source: slot.wanted.source.clone(),
            status: st.status.label().to_string(),
            diagnosis: st.diagnosis.clone(),
            last_error: st.last_error.clone(),
            transport: def.transport,
            command: def.command.clone(),
            program: st.binary.as_ref().map(|b| b.display().to_string()),
            args: def.args.iter().map(|a| mask(a)).collect(),
            cwd: def.cwd.clone(),
            url: def.url.as_deref().map(mask),
            env_keys: def.env.keys().cloned().collect(),
            header_keys: def.headers.keys().cloned().collect(),
            timeout_ms: self.timeout_of(def).as_millis() as u64,
            search_path,
            restarts: st.restarts,
            warnings: st.warnings.clone(),
            log,
        }))
    }

    pub fn logs(&self, name: &str) -> Option<Vec<crate::events::LogLine>> {
        self.slot(name).map(|s| s.log.snapshot())
    }

    /// `text` with `server`'s secrets masked (for errors built outside the
    /// manager, e.g. a connection test's report).
    pub fn redact(&self, server: &str, text: &str) -> String {
        match self.slot(server) {
            Some(s) => s.log.redactor.apply(text),
            None => text.to_string(),
        }
    }
}
