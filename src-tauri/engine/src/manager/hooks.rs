//! What the manager is given: sign-ins, tool trust, and who answers servers.

use std::sync::Arc;

use super::{ElicitationHandler, Manager, ProgressHandler, SamplingHandler};

impl Manager {
    /// The tool trust (pins, approval modes) gateways on this manager follow.
    pub fn set_trust(&self, cell: Option<Arc<crate::tool_trust::TrustCell>>) {
        *self.shared.trust.write().unwrap() = cell;
    }

    pub fn trust(&self) -> Option<Arc<crate::tool_trust::TrustCell>> {
        self.shared.trust.read().unwrap().clone()
    }

    /// Where stored sign-ins are read from when servers connect (the OS
    /// keychain in the app and CLI); `None` injects no OAuth tokens.
    /// With a vault, stored sign-ins are also refreshed ahead of expiry on
    /// a timer (see `keepalive`).
    pub fn set_vault(&self, vault: Option<crate::auth::vault::Vault>) {
        let some = vault.is_some();
        self.shared.secrets.set_keychain(vault.clone());
        *self.shared.vault.write().unwrap() = vault;
        if some && tokio::runtime::Handle::try_current().is_ok() {
            self.start_keepalive();
        }
    }

    pub fn vault(&self) -> Option<crate::auth::vault::Vault> {
        self.shared.vault.read().unwrap().clone()
    }

    /// Every secret value of every server's launches so far.
    pub fn known_secrets(&self) -> Arc<crate::redact::Redactor> {
        self.shared.known_secrets.clone()
    }

    /// Record calls through the gateway and the app in `journal` (`None`:
    /// nowhere).
    pub fn set_journal(&self, journal: Option<crate::journal::Journal>) {
        *self.shared.journal.write().unwrap() = journal;
    }

    pub fn journal(&self) -> Option<crate::journal::Journal> {
        self.shared.journal.read().unwrap().clone()
    }

    /// Open the journal in this host's data folder with `settings`' limits
    /// and OpenTelemetry export, and record calls in it; returns it.
    pub fn open_journal(
        &self,
        host: &crate::host::Host,
        settings: &crate::settings::Settings,
    ) -> crate::journal::Journal {
        let j = crate::journal::Journal::open(
            crate::journal::path(host),
            settings.journal.clone(),
            self.known_secrets(),
        );
        j.set_telemetry(&settings.telemetry);
        self.set_journal(Some(j.clone()));
        j
    }

    /// Who answers servers' elicitation requests; `None` declines them all.
    pub fn set_elicitation_handler(&self, handler: Option<ElicitationHandler>) {
        *self.shared.client_hooks.elicitation.write().unwrap() = handler;
    }

    /// Who answers servers' elicitation requests now (a gateway wraps it).
    pub fn elicitation_handler(&self) -> Option<ElicitationHandler> {
        self.shared.client_hooks.elicitation.read().unwrap().clone()
    }

    /// Who answers servers' `sampling/createMessage` (a gateway asks its
    /// clients); `None` refuses them. Servers connected from now on are
    /// told sampling is offered while one is set.
    pub fn set_sampling_handler(&self, handler: Option<SamplingHandler>) {
        *self.shared.client_hooks.sampling.write().unwrap() = handler;
    }

    /// Who answers servers' sampling requests now (a gateway wraps it).
    pub fn sampling_handler(&self) -> Option<SamplingHandler> {
        self.shared.client_hooks.sampling.read().unwrap().clone()
    }

    /// Who hears servers' `notifications/progress` (the gateway forwards them).
    pub fn set_progress_handler(&self, handler: Option<ProgressHandler>) {
        *self.shared.client_hooks.progress.write().unwrap() = handler;
    }
}
