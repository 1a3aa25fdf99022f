//! The manager's options (where it keeps its files, its timings) and the
//! defaults that can change while it runs ([`ManagerDefaults`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::{RestartPolicy, ServerDef};

use super::Manager;

pub const DEFAULT_GATE: Duration = Duration::from_millis(250);
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);
pub const DEFAULT_HEALTH_INTERVAL: Duration = Duration::from_secs(15);
pub const DEFAULT_PING_TIMEOUT: Duration = Duration::from_secs(5);
pub const DEFAULT_HEALTHY_AFTER: Duration = Duration::from_secs(60);
/// Upper bound of a tool call: long-running tools are legitimate, endless
/// ones are not; the user can always cancel sooner.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);
/// Least time between two re-lists after `tools/list_changed`.
pub const RELIST_INTERVAL: Duration = Duration::from_millis(500);

#[derive(Debug, Clone)]
pub struct ManagerOptions {
    /// Tool cache file; `None` disables the cache.
    pub cache_path: Option<PathBuf>,
    pub gate: Duration,
    /// The timeout of servers without their own, until `set_defaults` changes it.
    pub default_timeout: Duration,
    /// The restart policy of servers without their own, until `set_defaults` changes it.
    pub restart_policy: RestartPolicy,
    /// How long a stopping stdio server gets to exit on its own.
    pub grace: Duration,
    /// Environment for variables, secrets and children.
    pub env: HashMap<String, String>,
    pub home: PathBuf,
    /// A connected server is sent an MCP `ping` this often (a server that
    /// misses two in a row is restarted); `set_defaults` changes it.
    pub health_interval: Duration,
    pub ping_timeout: Duration,
    /// Connected this long, a server's restart counter starts over.
    pub healthy_after: Duration,
    /// Upper bound of one `tools/call` (other requests use the server's
    /// `timeout`, or `default_timeout`).
    pub call_timeout: Duration,
    /// Folder where this process records the process groups it starts, so
    /// the next start can end them if this one crashed (see `orphans`);
    /// `None` records nothing.
    pub process_records: Option<PathBuf>,
}

impl Default for ManagerOptions {
    /// No cache, this process's environment, the default timings.
    fn default() -> Self {
        ManagerOptions {
            cache_path: None,
            gate: DEFAULT_GATE,
            default_timeout: DEFAULT_TIMEOUT,
            restart_policy: RestartPolicy::default(),
            grace: DEFAULT_GRACE,
            env: std::env::vars().collect(),
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default(),
            health_interval: DEFAULT_HEALTH_INTERVAL,
            ping_timeout: DEFAULT_PING_TIMEOUT,
            healthy_after: DEFAULT_HEALTHY_AFTER,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            process_records: None,
        }
    }
}

impl ManagerOptions {
    pub fn for_host(host: &crate::host::Host) -> Self {
        ManagerOptions {
            cache_path: Some(host.join(
                &host.join(&host.cache_dir(), "switchboard"),
                "tool-cache.json",
            )),
            gate: DEFAULT_GATE,
            default_timeout: DEFAULT_TIMEOUT,
            restart_policy: RestartPolicy::default(),
            grace: DEFAULT_GRACE,
            env: host.vars.clone(),
            home: host.home.clone(),
            health_interval: DEFAULT_HEALTH_INTERVAL,
            ping_timeout: DEFAULT_PING_TIMEOUT,
            healthy_after: DEFAULT_HEALTHY_AFTER,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            process_records: Some(
                host.join(&host.join(&host.cache_dir(), "switchboard"), "running"),
            ),
        }
    }
}

/// The defaults the app's settings change while servers run. A server whose
/// definition sets its own `timeout` or `restartPolicy` keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagerDefaults {
    /// How long a connect, and each request, may take.
    pub timeout: Duration,
    pub restart_policy: RestartPolicy,
    /// How often connected servers are pinged.
    pub health_interval: Duration,
}

impl From<&ManagerOptions> for ManagerDefaults {
    fn from(o: &ManagerOptions) -> Self {
        ManagerDefaults {
            timeout: o.default_timeout,
            restart_policy: o.restart_policy,
            health_interval: o.health_interval,
        }
    }
}

impl Manager {
    /// New defaults. Running servers are not restarted: a new timeout or
    /// restart policy applies from each server's next connect or restart, a
    /// new health interval from its next health check.
    pub fn set_defaults(&self, d: ManagerDefaults) {
        self.shared.defaults.send_replace(d);
    }

    pub fn defaults(&self) -> ManagerDefaults {
        self.shared.defaults.borrow().clone()
    }

    /// How long connecting to `def` (and each request to it) may take now.
    pub(super) fn timeout_of(&self, def: &ServerDef) -> Duration {
        def.timeout
            .map(Duration::from_millis)
            .unwrap_or_else(|| self.defaults().timeout)
    }

    /// The restart policy `def` follows now.
    pub(super) fn restart_policy_of(&self, def: &ServerDef) -> RestartPolicy {
        def.restart_policy
            .unwrap_or_else(|| self.defaults().restart_policy)
    }
}
