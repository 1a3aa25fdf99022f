//! What one launch needs: variables, secrets and the command resolved.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::config::vars::{expand, VarContext};
use crate::config::Transport;
use crate::doctor::Failure;
use crate::events::EngineEvent;
use crate::launch::CommandResolver;

use super::connection::Launch;
use super::supervisor::Outcome;
use super::{Manager, Slot, Wanted};

impl Manager {
    pub(super) fn var_context(&self, w: &Wanted) -> VarContext {
        VarContext {
            env: self.shared.opts.env.clone(),
            workspace_folder: w.project.as_ref().map(|p| p.to_string_lossy().to_string()),
            user_home: Some(self.shared.opts.home.to_string_lossy().to_string()),
            inputs: HashMap::new(),
            expansion: w.expansion,
        }
    }

    /// A managed remote server's URL with its variables expanded, as it connects.
    pub fn resolved_url(&self, name: &str) -> Option<String> {
        let slot = self.slot(name)?;
        let url = slot.wanted.def.url.clone()?;
        Some(expand(&url, &self.var_context(&slot.wanted)).value)
    }

    /// Resolve variables, secrets and the command for one launch.
    pub(super) async fn prepare(&self, slot: &Slot) -> Result<Launch, Outcome> {
        let mut launch = self
            .prepare_launch(slot)
            .await
            .map_err(|failure| Outcome::Failed {
                failure,
                healthy_for: Duration::ZERO,
            })?;
        self.add_sign_in(slot, &mut launch)
            .await
            .map_err(|message| Outcome::NeedsAuth {
                message,
                challenge: None,
            })?;
        Ok(launch)
    }

    pub(super) async fn prepare_launch(&self, slot: &Slot) -> Result<Launch, Failure> {
        let w = &slot.wanted;
        let cx = self.var_context(w);
        let mut def = w.def.clone();
        let x = |s: &str| expand(s, &cx).value;
        def.command = def.command.as_deref().map(x);
        def.args = def.args.iter().map(|a| x(a)).collect();
        def.cwd = def.cwd.as_deref().map(x);
        if def.transport == Transport::Stdio {
            let folder = w.working_folder(def.cwd.as_deref());
            if let Some(f) = folder.as_ref().filter(|f| !f.is_dir()) {
                return Err(Failure::Folder {
                    message: match &def.cwd {
                        Some(c) => format!("its working folder {} does not exist (\"cwd\": \"{c}\"); fix \"cwd\" in its config file", f.display()),
                        None => format!("its working folder, the project folder {}, does not exist", f.display()),
                    },
                });
            }
            def.cwd = folder.map(|f| f.to_string_lossy().into_owned());
        }
        def.url = def.url.as_deref().map(x);
        if let Some(u) = &def.url {
            crate::config::validate::check_url(u).map_err(|e| Failure::Invalid {
                message: format!("url {e}"),
            })?;
        }
        let (env, mut warnings) = self
            .shared
            .secrets
            .resolve_map_in("env", &def.env, &cx)
            .await;
        let (headers, w2) = self
            .shared
            .secrets
            .resolve_map_in("header", &def.headers, &cx)
            .await;
        warnings.extend(w2);
        // Arguments with a value kept in the keychain (installed from the registry).
        let mut arg_secrets = vec![];
        for (i, raw) in w.def.args.iter().enumerate() {
            match self.shared.secrets.resolve_keychain_refs(raw, &cx).await {
                Some(crate::auth::secrets::Resolution::Value(v)) => {
                    arg_secrets.push(v.clone());
                    def.args[i] = v;
                }
                Some(crate::auth::secrets::Resolution::Unresolved { reason }) => {
                    return Err(Failure::Invalid {
                        message: format!("argument {} resolved to nothing ({reason})", i + 1),
                    })
                }
                None => {}
            }
        }
        // Before anything about this launch is shown: its secrets are masked.
        let mut masked = crate::redact::secret_values(
            &w.def.env,
            &env,
            &headers,
            w.def.url.as_deref(),
            def.url.as_deref(),
        );
        masked.extend(arg_secrets);
        slot.log.redactor.set(masked);
        let warnings: Vec<String> = warnings
            .iter()
            .map(|w| slot.log.redactor.apply(w))
            .collect();
        for w in &warnings {
            let _ = self.shared.events.send(EngineEvent::Warning {
                server: slot.name.clone(),
                message: w.clone(),
            });
            slot.log.now("warning", w);
        }
        slot.rt.lock().unwrap().warnings = warnings;
        if def.transport != Transport::Stdio {
            return Ok(Launch {
                def,
                program: PathBuf::new(),
                path_env: None,
                env,
                headers,
                oauth: None,
            });
        }
        // Only stdio servers need the command search PATH (the login shell is asked once).
        let commands = self
            .shared
            .commands
            .get_or_init(|| async {
                let path = self
                    .shared
                    .opts
                    .env
                    .get("PATH")
                    .map(std::ffi::OsString::from);
                let home = Some(self.shared.opts.home.clone());
                let r = tokio::task::spawn_blocking(move || {
                    CommandResolver::new(
                        path,
                        home,
                        crate::launch::login_shell_path().map(String::from),
                    )
                })
                .await;
                Arc::new(r.expect("command resolver"))
            })
            .await
            .clone();
        let program = match def.transport {
            Transport::Stdio => {
                let cmd = def.command.clone().unwrap_or_default();
                let cwd = def.cwd.as_ref().map(PathBuf::from);
                commands.resolve(&cmd, cwd.as_deref()).map_err(|message| {
                    if cmd.trim().is_empty() {
                        Failure::Invalid { message }
                    } else {
                        Failure::NotFound {
                            searched: commands.describe_dirs(),
                            message,
                            login_shell: crate::launch::login_shell_path().is_some(),
                        }
                    }
                })?
            }
            _ => PathBuf::new(),
        };
        Ok(Launch {
            def,
            program,
            path_env: Some(commands.search_path()),
            env,
            headers,
            oauth: None,
        })
    }
}
