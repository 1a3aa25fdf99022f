//! `switchboard install 'LINK'`: an install link (VS Code's, Cursor's, LM
//! Studio's, Switchboard's own) or a pasted server entry, read by the
//! engine's `install_link`, shown (origin, warnings, the exact command or
//! URL, where it goes) and written the way a registry install is
//! (`registry::apply`: the name check, the keychain, the writer).

use std::collections::HashMap;
use std::io::{BufRead, IsTerminal, Read};

use switchboard_engine::auth::vault::Vault;
use switchboard_engine::discovery::{discover, DiscoverOptions};
use switchboard_engine::host::Host;
use switchboard_engine::install_link::{self, Input, LinkServer, RegistryRef};
use switchboard_engine::registry::apply;
use switchboard_engine::registry::link;
use switchboard_engine::settings::Settings;

pub struct InstallLink {
    pub text: String,
    /// `ID=VALUE` for the link's inputs.
    pub inputs: Vec<(String, String)>,
    pub to: String,
    pub as_name: Option<String>,
    pub replace: bool,
    pub skip_runtime_check: bool,
    /// Install despite warnings without asking (`--yes`).
    pub yes: bool,
    /// A registry install's flag that was given (`--env`, …): refused
    /// unless the link names a registry server.
    pub registry_flag: Option<&'static str>,
}

/// Whether `arg` of `switchboard install` is a link or a pasted entry rather
/// than a registry name (which holds no `:` and starts with no bracket).
pub fn is_link(arg: &str) -> bool {
    let t = arg.trim_start();
    t.contains(':') || t.starts_with('{') || t.starts_with('[')
}

/// What is left to do: nothing, or install a registry server the link names.
pub enum Next {
    Done,
    Registry(RegistryRef),
}

/// The one server to install: the link's only one, or the one `--name` names.
fn pick<'a>(servers: &'a [LinkServer], name: Option<&str>) -> anyhow::Result<&'a LinkServer> {
    if let [one] = servers {
        return Ok(one);
    }
    let names: Vec<&str> = servers.iter().map(|s| s.def.name.as_str()).collect();
    name.and_then(|n| servers.iter().find(|s| s.def.name == n))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "the text describes {} servers ({}); pick one with --name",
                servers.len(),
                names.join(", ")
            )
        })
}

/// Values for every input: `--input` flags, defaults, then the terminal
/// (passwords without echo) or standard input as `ID=VALUE` lines.
fn values(
    server: &LinkServer,
    given: &[(String, String)],
) -> anyhow::Result<HashMap<String, String>> {
    let ids: Vec<&str> = server.inputs.iter().map(|i| i.id.as_str()).collect();
    let mut out = HashMap::new();
    for (k, v) in given {
        if !ids.contains(&k.as_str()) {
            anyhow::bail!(
                "--input {k}: the link has no input of that id{}",
                if ids.is_empty() {
                    String::new()
                } else {
                    format!(" (it has: {})", ids.join(", "))
                }
            );
        }
        out.insert(k.clone(), v.clone());
    }
    let mut missing: Vec<&Input> = vec![];
    for i in &server.inputs {
        if out.contains_key(&i.id) {
            continue;
        }
        match &i.default {
            Some(d) => {
                out.insert(i.id.clone(), d.clone());
            }
            None => missing.push(i),
        }
    }
    if missing.is_empty() {
        return Ok(out);
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        for i in missing {
            let about = i
                .description
                .as_deref()
                .map(|d| format!(" — {d}"))
                .unwrap_or_default();
            let v = if i.password {
                crate::token::prompt(&format!("{}{about} (secret, not shown): ", i.id))?
            } else {
                eprint!("{}{about}: ", i.id);
                let mut line = String::new();
                stdin.lock().read_line(&mut line)?;
                line
            };
            out.insert(i.id.clone(), v.trim_end_matches(['\r', '\n']).to_string());
        }
        return Ok(out);
    }
    let mut text = String::new();
    stdin.lock().take(1 << 20).read_to_string(&mut text)?;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Some((k, v)) = line.split_once('=') else {
            anyhow::bail!("standard input should hold the link's inputs as ID=VALUE lines");
        };
        let k = k.trim();
        if !ids.contains(&k) {
            anyhow::bail!(
                "standard input names {k}, which is not an input of the link (it has: {})",
                ids.join(", ")
            );
        }
        out.insert(k.to_string(), v.to_string());
    }
    let still: Vec<String> = missing
        .iter()
        .filter(|i| !out.contains_key(&i.id))
        .map(|i| {
            let about = i
                .description
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            format!("{}{about}", i.id)
        })
        .collect();
    if !still.is_empty() {
        anyhow::bail!(
            "no value for the link's input {}: give --input ID=VALUE (secrets on standard input as ID=VALUE lines)",
            still.join(", ")
        );
    }
    Ok(out)
}

fn masked(text: &str, secrets: &[&String]) -> String {
    secrets
        .iter()
        .filter(|s| !s.is_empty())
        .fold(text.to_string(), |t, s| t.replace(s.as_str(), "••••"))
}

pub async fn install(
    host: &Host,
    settings: &mut Settings,
    o: &DiscoverOptions,
    i: InstallLink,
) -> anyhow::Result<Next> {
    let link = install_link::read(&i.text)?;
    if let Some(r) = link.registry {
        if !i.inputs.is_empty() {
            anyhow::bail!("--input is for links that carry a server entry; {} names a registry server: give its values as --env, --arg, --header", link.origin.kind.label());
        }
        println!(
            "{} names {} of the MCP Registry",
            link.origin.kind.label(),
            r.name
        );
        return Ok(Next::Registry(r));
    }
    if let Some(flag) = i.registry_flag {
        anyhow::bail!(
            "{flag} is for registry installs; give the link's values as --input ID=VALUE"
        );
    }
    let server = pick(&link.servers, i.as_name.as_deref())?;
    let name = i
        .as_name
        .clone()
        .or_else(|| Some(server.def.name.clone()).filter(|n| !n.is_empty()))
        .ok_or_else(|| anyhow::anyhow!("the link gives the server no name; pass --name NAME"))?;
    let given = values(server, &i.inputs)?;

    let d = discover(host, settings, o);
    let prepared = link::prepare_link(&d, server, &name, &i.to, &given, i.replace)?;
    let own = d
        .source(&prepared.report.source)
        .is_some_and(|s| s.client == switchboard_engine::sources::Client::Switchboard);
    let def = &prepared.built.def;
    let r = &prepared.report;
    let secrets: Vec<&String> = server
        .inputs
        .iter()
        .filter(|x| x.password)
        .map(|x| &given[&x.id])
        .collect();

    println!(
        "{} for \"{}\"",
        link.origin.kind.label(),
        server.name.as_deref().unwrap_or(&r.name)
    );
    for w in &link.warnings {
        println!("  warning: {}", w.message);
    }
    match (&def.command, &def.url) {
        (Some(c), _) => {
            println!("  will run: {}", masked(c, &secrets));
            for a in &def.args {
                println!("    arg: {}", masked(a, &secrets));
            }
        }
        (None, Some(u)) => println!("  will connect to: {}", masked(u, &secrets)),
        (None, None) => {}
    }
    for (k, v) in &def.env {
        println!("    env: {k}={}", masked(v, &secrets));
    }
    for (k, v) in &def.headers {
        println!("    header: {k}: {}", masked(v, &secrets));
    }
    println!(
        "  written as \"{}\" to: {}{}",
        r.name,
        r.path.display(),
        if r.replaced { " (replacing it)" } else { "" }
    );
    if let (Some(c), false) = (&def.command, i.skip_runtime_check) {
        let resolver = switchboard_engine::launch::CommandResolver::new(
            std::env::var_os("PATH"),
            Some(host.home.clone()),
            switchboard_engine::launch::login_shell_path().map(String::from),
        );
        if resolver.resolve(c, None).is_err() {
            anyhow::bail!("\"{c}\" is not installed here (not on your PATH or your login shell's): {}. Then install again (or pass --skip-runtime-check to write it anyway)", apply::runtime_hint(c));
        }
    }

    if !link.warnings.is_empty() && !i.yes {
        confirm_warnings(link.warnings.len())?;
    }

    let vault = Vault::keychain();
    let spec = crate::registry::keep_and_write(host, settings, &d, &vault, &prepared).await?;
    println!(
        "{} \"{}\" in {}",
        if r.replaced { "Replaced" } else { "Installed" },
        r.name,
        r.path.display()
    );
    if !r.kept_in_keychain.is_empty() {
        println!(
            "Secrets kept in the OS keychain ({}), not in the file: {}",
            vault.describe(),
            r.kept_in_keychain.join(", ")
        );
    }
    for s in server.inline_secrets.iter().filter(|_| own) {
        let flag = match s.field.as_str() {
            "env" => "--env",
            "headers" => "--header",
            _ => continue,
        };
        println!(
            "The link writes {} {} as text: `switchboard keychain keep {} {flag} {}` moves it into the keychain",
            s.field, s.key, r.name, s.key
        );
    }
    if r.plain_text_secrets {
        eprintln!(
            "warning: {} keeps secret values in plain text in {}; install into Switchboard's own list (--to switchboard, served to every client through the gateway) to keep them in the OS keychain",
            spec.client.display_name(),
            r.path.display()
        );
    }
    Ok(Next::Done)
}

/// A link with warnings is installed only once the person agreed: asked at
/// a terminal, or `--yes` (a script cannot answer, so it is refused).
fn confirm_warnings(count: usize) -> anyhow::Result<()> {
    use std::io::{BufRead, IsTerminal, Write};
    let plural = if count == 1 { "warning" } else { "warnings" };
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        anyhow::bail!(
            "the link shows {count} {plural} (above); nothing was written: check what it runs, and pass --yes to install it anyway"
        );
    }
    eprint!("The link shows {count} {plural} (above). Install it anyway? [y/N] ");
    std::io::stderr().flush()?;
    let mut line = String::new();
    stdin.lock().read_line(&mut line)?;
    if matches!(line.trim(), "y" | "Y" | "yes" | "Yes") {
        Ok(())
    } else {
        anyhow::bail!("not installed; nothing was written")
    }
}
