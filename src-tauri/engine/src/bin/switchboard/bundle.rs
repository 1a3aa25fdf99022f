//! `switchboard install ./x.mcpb`: a Claude Desktop extension installed as an
//! ordinary stdio server. The bundle is checked and shown first (name,
//! version, author, signature, compatibility, the exact command and where it
//! goes); then it is unpacked into Switchboard's data folder and written the
//! way a registry install is (`registry::apply`: the name check, the
//! keychain, the writer). Nothing is started here. `switchboard remove`
//! of such a server also removes its folder and keychain items.

use std::io::{BufRead, IsTerminal, Read};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use switchboard_engine::auth::vault::Vault;
use switchboard_engine::bundle::{
    check_compatibility, leftovers, parse_config_flags, server_def, this_platform, Bundle,
    ConfigValues, Leftovers, Limits, Manifest, Places, UnpackOptions,
};
use switchboard_engine::discovery::{discover, DiscoverOptions};
use switchboard_engine::host::Host;
use switchboard_engine::registry::apply;
use switchboard_engine::settings::Settings;
use switchboard_engine::writer::edit::{ServerEdit, Writer};

pub struct InstallBundle {
    pub file: PathBuf,
    pub config: Vec<String>,
    pub to: String,
    pub as_name: Option<String>,
    pub replace: bool,
    pub skip_runtime_check: bool,
}

/// Whether `arg` of `switchboard install` names a bundle rather than a
/// registry server.
pub fn is_bundle(arg: &str) -> bool {
    arg.to_ascii_lowercase().ends_with(".mcpb")
}

/// Required values without a default that were not given: typed at the
/// terminal (sensitive ones without echo), or read from standard input as
/// `KEY=VALUE` lines, as `switchboard install NAME` reads secrets.
fn ask_missing(file: &Path, manifest: &Manifest, values: &mut ConfigValues) -> anyhow::Result<()> {
    let wanted: Vec<&String> = manifest
        .user_config
        .iter()
        .filter(|(k, f)| {
            f.required
                && f.default.as_ref().is_none_or(|d| d.is_null())
                && values
                    .get(*k)
                    .is_none_or(|v| v.iter().all(|x| x.is_empty()))
        })
        .map(|(k, _)| k)
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        for key in wanted {
            let f = &manifest.user_config[key];
            let label = if f.title.is_empty() { key } else { &f.title };
            let v = if f.sensitive {
                crate::token::prompt(&format!("{label} ({key}, secret, not shown): "))?
            } else {
                eprint!("{label} ({key}): ");
                let mut line = String::new();
                stdin.lock().read_line(&mut line)?;
                line
            };
            let v = v.trim_end_matches(['\r', '\n']).to_string();
            values.insert(key.clone(), vec![v]);
        }
        return Ok(());
    }
    let mut text = String::new();
    stdin.lock().take(1 << 20).read_to_string(&mut text)?;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Some((k, v)) = line.split_once('=') else {
            anyhow::bail!("standard input should hold the bundle's settings as KEY=VALUE lines (one per setting)");
        };
        let k = k.trim();
        if !manifest.user_config.contains_key(k) {
            anyhow::bail!(
                "standard input names {k}, which is not a setting of {} (it has: {})",
                file.display(),
                manifest
                    .user_config
                    .keys()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        values.entry(k.to_string()).or_default().push(v.to_string());
    }
    Ok(())
}

/// `text` with every sensitive value given replaced by `••••`.
fn masked(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .filter(|s| !s.is_empty())
        .fold(text.to_string(), |t, s| t.replace(s.as_str(), "••••"))
}

pub async fn install(
    host: &Host,
    settings: &mut Settings,
    o: &DiscoverOptions,
    i: InstallBundle,
) -> anyhow::Result<()> {
    if !i.file.is_file() {
        anyhow::bail!(
            "{}: no such file; give the path of a .mcpb bundle (or a registry name without .mcpb)",
            i.file.display()
        );
    }
    let limits = Limits::default();
    let bundle = Bundle::open(&i.file, &limits)?;
    let m = &bundle.manifest;
    let verdict = check_compatibility(m);

    println!(
        "Bundle {} ({}) {}",
        m.display_name.as_deref().unwrap_or(&m.name),
        m.name,
        m.version
    );
    if let Some(a) = &m.author {
        println!("  author: {}", a.name);
    }
    println!("  signature: {}", bundle.signature);
    if verdict.compatible {
        let found = if verdict.found.is_empty() {
            String::new()
        } else {
            format!(" ({})", verdict.found.join(", "))
        };
        println!("  compatibility: runs here{found}");
    } else {
        println!(
            "  compatibility: does not run here: {}",
            verdict.problems.join("; ")
        );
        if !i.skip_runtime_check {
            anyhow::bail!(
                "{}: cannot run on this machine: {}; nothing was unpacked or written (install what it needs, or pass --skip-runtime-check to write it anyway)",
                i.file.display(),
                verdict.problems.join("; ")
            );
        }
    }

    let mut values = parse_config_flags(&i.config)?;
    ask_missing(&i.file, m, &mut values)?;
    let secret_values: Vec<String> = m
        .user_config
        .iter()
        .filter(|(_, f)| f.sensitive)
        .filter_map(|(k, _)| values.get(k))
        .flatten()
        .cloned()
        .collect();

    let d = discover(host, settings, o);
    let name = i.as_name.clone().unwrap_or_else(|| m.name.clone());
    let slot = apply::slot(&d, &i.to, &name, i.replace)?;
    let data = host.switchboard_data_dir();
    let dir = bundle.target_dir(&data);
    let mut places = Places::of(host);
    places.platform = this_platform().into();
    let built = server_def(m, &slot.name, &dir, &values, &places, &slot.secrets())
        .map_err(|e| anyhow::anyhow!("{}: {e}", i.file.display()))?;
    let prepared = slot.prepared(built);
    let def = &prepared.built.def;

    let r = &prepared.report;
    println!("  will run: {}", def.command.as_deref().unwrap_or(""));
    for a in &def.args {
        println!("    arg: {}", masked(a, &secret_values));
    }
    for (k, v) in &def.env {
        println!("    env: {k}={}", masked(v, &secret_values));
    }
    println!("  unpacked into: {}", dir.display());
    println!(
        "  written as \"{}\" to: {}{}",
        r.name,
        r.path.display(),
        if r.replaced { " (replacing it)" } else { "" }
    );

    let before = d
        .servers
        .iter()
        .flat_map(|s| s.definitions.iter())
        .find(|x| x.source == r.source && x.def.name == r.name)
        .map(|x| x.def.clone());
    let existed = dir.exists();
    let unpacked = bundle.unpack(
        &data,
        &limits,
        UnpackOptions { replace: i.replace },
        &mut |_| ControlFlow::Continue(()),
    )?;
    if !unpacked.reused {
        println!(
            "Unpacked {} files ({} bytes) into {}",
            bundle.entries.iter().filter(|e| !e.is_dir).count(),
            bundle.unpacked_size,
            unpacked.dir.display()
        );
    }
    // Nothing left half-done: a folder this install made goes again on failure.
    let undo_unpack = || {
        if !existed && !unpacked.reused {
            let _ = std::fs::remove_dir_all(&unpacked.dir);
        }
    };
    let vault = Vault::keychain();
    let spec = match crate::registry::keep_and_write(host, settings, &d, &vault, &prepared).await {
        Ok(spec) => spec,
        Err(e) => {
            undo_unpack();
            return Err(e);
        }
    };
    if let Some(old) = before.filter(|_| r.replaced) {
        // An update: the version (and settings) it replaced may be unused now.
        clean_up(&leftovers(&old, &discover(host, settings, o), &data)).await?;
    }
    println!(
        "{} \"{}\" ({} {}) in {}",
        if r.replaced { "Replaced" } else { "Installed" },
        r.name,
        m.name,
        m.version,
        r.path.display()
    );
    if !r.kept_in_keychain.is_empty() {
        println!(
            "Secrets kept in the OS keychain ({}), not in the file: {}",
            vault.describe(),
            r.kept_in_keychain.join(", ")
        );
    }
    if r.plain_text_secrets {
        eprintln!(
            "warning: {} keeps secret values in plain text in {}; install into Switchboard's own list (--to switchboard, served to every client through the gateway) to keep them in the OS keychain",
            spec.client.display_name(),
            r.path.display()
        );
    }
    Ok(())
}

/// `switchboard remove NAME [--source ID]`: the definition goes from its
/// file; when it ran from an unpacked bundle, that folder and the keychain
/// items it referred to go too, unless another definition still uses them.
pub async fn remove(
    host: &Host,
    settings: &mut Settings,
    o: &DiscoverOptions,
    name: &str,
    source: Option<String>,
) -> anyhow::Result<()> {
    let d = discover(host, settings, o);
    let spec = crate::pick_source(&d, name, source)?;
    let removed = d
        .servers
        .iter()
        .flat_map(|s| s.definitions.iter())
        .find(|x| x.source == spec.id && x.def.name == name)
        .map(|x| x.def.clone());
    let seen = d.source(&spec.id).and_then(|s| s.hash);
    Writer::new(host, settings).apply(
        &spec,
        ServerEdit::Remove {
            name: name.to_string(),
        },
        seen,
    )?;
    println!("Removed \"{name}\" in {}", spec.path.display());
    let Some(removed) = removed else {
        return Ok(());
    };
    let data = host.switchboard_data_dir();
    clean_up(&leftovers(&removed, &discover(host, settings, o), &data)).await
}

/// Removes what a removed or replaced server left unused (its unpacked
/// folder and keychain items, `bundle::clean_up`) and says so.
async fn clean_up(left: &Leftovers) -> anyhow::Result<()> {
    let vault = Vault::keychain();
    let done = switchboard_engine::bundle::clean_up(left, &vault).await;
    if let Some(dir) = &done.removed_dir {
        println!("Removed its unpacked bundle {}", dir.display());
    }
    if !done.removed_secrets.is_empty() {
        println!(
            "Removed its secrets from the OS keychain ({}): {}",
            vault.describe(),
            done.removed_secrets.join(", ")
        );
    }
    for p in &done.problems {
        eprintln!("warning: {p}");
    }
    Ok(())
}
