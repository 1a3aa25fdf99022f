//! What a link's definition asks for that the user should see before
//! installing: a program in a temporary folder, shell syntax, a shell asked
//! to run a command line, credentials written inline; and the values it
//! leaves for the user (`${input:id}`, `<YOUR_TOKEN>`-style placeholders).
//! Switchboard never runs a server through a shell; these are warnings, not
//! refusals, because the link only fills a form.

use std::sync::OnceLock;

use regex::Regex;

use super::{InlineSecret, Input, InputKind, LinkWarning, WarningKind};
use crate::config::ServerDef;
use crate::redact::{literal_secret, looks_secret, token_shaped, url_literal_secrets};

/// Where temporary folders are, as a command or argument may spell them.
const TEMP_PREFIXES: &[&str] = &[
    "/tmp/",
    "/var/tmp/",
    "/private/tmp/",
    "/private/var/folders/",
    "/var/folders/",
    "/dev/shm/",
    "%temp%",
    "%tmp%",
    "$tmpdir",
    "${tmpdir}",
    "${env:tmpdir}",
    "${env:temp}",
    "${env:tmp}",
    "$env:temp",
    "$env:tmp",
    "c:\\windows\\temp\\",
    "c:/windows/temp/",
];

/// A path into a temporary folder: anyone on the machine may have written
/// the file, and it may be gone after a restart.
pub fn temp_path(s: &str) -> bool {
    let l = s.trim().to_ascii_lowercase();
    let unix = l.replace('\\', "/");
    TEMP_PREFIXES.iter().any(|p| l.starts_with(p))
        || unix.contains("/appdata/local/temp/")
        || unix == "/tmp"
}

/// Shell syntax in a word: the program gets it as text, but it reads as
/// an attempt at a command line.
pub fn shell_syntax(s: &str) -> Option<&'static str> {
    [
        ("`", "a backtick"),
        ("$(", "\"$(\""),
        ("&&", "\"&&\""),
        ("||", "\"||\""),
        (";", "\";\""),
        ("|", "\"|\""),
        ("\n", "a line break"),
    ]
    .into_iter()
    .find(|(p, _)| s.contains(p))
    .map(|(_, name)| name)
}

/// `bash -c …`, `cmd /c …`, `powershell -Command …`: a shell given a
/// command line to run. Returns the shell and its flag.
pub fn shell_command(command: &str, args: &[String]) -> Option<(String, String)> {
    let base = command
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(command)
        .to_ascii_lowercase();
    let base = base.strip_suffix(".exe").unwrap_or(&base).to_string();
    let posix = ["sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox"];
    let flag = args.iter().find(|a| {
        let l = a.to_ascii_lowercase();
        if posix.contains(&base.as_str()) {
            // `-c`, and combined flags such as `-lc`, `-ec`.
            l.starts_with('-')
                && !l.starts_with("--")
                && l.len() > 1
                && l[1..].chars().all(|c| c.is_ascii_alphabetic())
                && l.contains('c')
        } else if base == "cmd" {
            l == "/c" || l == "/k"
        } else if base == "powershell" || base == "pwsh" {
            let f = l.trim_start_matches('-').trim_start_matches('/');
            l.len() > f.len()
                && !f.is_empty()
                && ("command".starts_with(f) || "encodedcommand".starts_with(f) || f == "ec")
        } else {
            false
        }
    })?;
    Some((base, flag.clone()))
}

/// Every warning about what `def` runs, and the credentials it carries as
/// literal text.
pub fn check(def: &ServerDef, server: &Option<String>) -> (Vec<LinkWarning>, Vec<InlineSecret>) {
    let mut warnings = vec![];
    let mut secrets = vec![];
    let mut warn = |field: String, kind, message: String| {
        warnings.push(LinkWarning {
            server: server.clone(),
            field: Some(field),
            kind,
            message,
        })
    };
    if let Some(c) = &def.command {
        if temp_path(c) {
            warn(
                "command".into(),
                WarningKind::TempPath,
                format!("the command \"{c}\" is a program in a temporary folder"),
            );
        }
        if let Some(what) = shell_syntax(c) {
            warn(
                "command".into(),
                WarningKind::ShellSyntax,
                format!("the command contains {what}, shell syntax; Switchboard runs no shell, so it is passed as text"),
            );
        }
        if let Some((shell, flag)) = shell_command(c, &def.args) {
            warn(
                "args".into(),
                WarningKind::ShellCommand,
                format!("the server runs through a shell (\"{shell} {flag} …\"): whatever command line follows runs with your rights"),
            );
        }
    }
    for (i, a) in def.args.iter().enumerate() {
        let field = format!("args[{i}]");
        if temp_path(a) {
            warn(
                field.clone(),
                WarningKind::TempPath,
                format!(
                    "argument {} (\"{a}\") is a path into a temporary folder",
                    i + 1
                ),
            );
        }
        if let Some(what) = shell_syntax(a) {
            warn(
                field.clone(),
                WarningKind::ShellSyntax,
                format!("argument {} contains {what}, shell syntax; Switchboard runs no shell, so it is passed as text", i + 1),
            );
        }
        let (name, value) = a.split_once('=').unwrap_or(("", a));
        if literal_secret(name.trim_start_matches('-'), value).is_some()
            || a.split_whitespace().any(token_shaped)
        {
            secrets.push(InlineSecret {
                field: "args".into(),
                key: i.to_string(),
            });
            warn(
                field,
                WarningKind::InlineSecret,
                format!("argument {} looks like a credential written inline; it would be stored in the client's file as it is", i + 1),
            );
        }
    }
    for (group, map) in [("env", &def.env), ("headers", &def.headers)] {
        for (k, v) in map {
            if literal_secret(k, v).is_some() {
                secrets.push(InlineSecret {
                    field: group.into(),
                    key: k.clone(),
                });
                warn(
                    format!("{group}.{k}"),
                    WarningKind::InlineSecret,
                    format!("{k} holds a credential written inline; keep it in the keychain instead of the client's file"),
                );
            }
        }
    }
    if let Some(u) = &def.url {
        for (part, _) in url_literal_secrets(u) {
            secrets.push(InlineSecret {
                field: "url".into(),
                key: part.clone(),
            });
            warn(
                "url".into(),
                WarningKind::InlineSecret,
                format!("the URL carries a credential inline ({part})"),
            );
        }
    }
    (warnings, secrets)
}

/// A VS Code input as a link declares it (`inputs: [{type, id, description, password}]`).
#[derive(Debug, Clone, Default)]
pub struct Declared {
    pub id: String,
    pub description: Option<String>,
    pub password: bool,
    pub default: Option<String>,
    pub options: Vec<String>,
}

/// Read a link's `inputs` array; what is not an input is a warning.
pub fn declared_inputs(v: &serde_json::Value, warnings: &mut Vec<String>) -> Vec<Declared> {
    let Some(list) = v.as_array() else {
        warnings.push("\"inputs\" is not a list; ignored".into());
        return vec![];
    };
    let mut out = vec![];
    for (i, item) in list.iter().enumerate() {
        let Some(id) = item.get("id").and_then(|x| x.as_str()) else {
            warnings.push(format!("inputs[{i}] has no \"id\"; ignored"));
            continue;
        };
        let kind = item
            .get("type")
            .and_then(|x| x.as_str())
            .unwrap_or("promptString");
        if !matches!(kind, "promptString" | "pickString") {
            warnings.push(format!("input \"{id}\" has type \"{kind}\", which a link cannot ask for; it is asked as text"));
        }
        let text = |k: &str| item.get(k).and_then(|x| x.as_str()).map(String::from);
        out.push(Declared {
            id: id.into(),
            description: text("description"),
            password: item
                .get("password")
                .and_then(|x| x.as_bool())
                .unwrap_or(false),
            default: text("default"),
            options: item
                .get("options")
                .and_then(|o| o.as_array())
                .map(|o| {
                    o.iter()
                        .filter_map(|x| x.as_str().or_else(|| x.get("value")?.as_str()))
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
        });
    }
    out
}

/// Every string of `def` with the place it is in (`env.KEY`, `args[2]`, …)
/// and the name that says what it is (the variable, header or flag).
fn places(def: &ServerDef) -> Vec<(String, String, &str)> {
    let mut out = vec![];
    if let Some(c) = &def.command {
        out.push(("command".into(), String::new(), c.as_str()));
    }
    for (i, a) in def.args.iter().enumerate() {
        let name = a
            .split_once('=')
            .map_or("", |(n, _)| n)
            .trim_start_matches('-');
        out.push((format!("args[{i}]"), name.to_string(), a.as_str()));
    }
    if let Some(c) = &def.cwd {
        out.push(("cwd".into(), String::new(), c.as_str()));
    }
    if let Some(u) = &def.url {
        out.push(("url".into(), String::new(), u.as_str()));
    }
    for (k, v) in &def.env {
        out.push((format!("env.{k}"), k.clone(), v.as_str()));
    }
    for (k, v) in &def.headers {
        out.push((format!("headers.{k}"), k.clone(), v.as_str()));
    }
    out
}

fn input_ref() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"\$\{input:([^}\s]+)\}").expect("valid pattern"))
}

/// `<YOUR_TOKEN>`, `<your-api-key>`, `YOUR_API_KEY_HERE`: text a README
/// tells the reader to replace.
fn placeholder() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)<[a-z][a-z0-9_ .\-]{0,60}>|\byour[_-][a-z0-9_\-]*[a-z0-9]|\b[a-z0-9_\-]+[_-]here\b")
            .expect("valid pattern")
    })
}

/// The values the user must give: each `${input:id}` the definition uses
/// (described by its declaration, or a warning when it has none), then each
/// placeholder. Declared inputs the definition never uses are left out.
pub fn inputs(
    def: &ServerDef,
    declared: &[Declared],
    server: &Option<String>,
) -> (Vec<Input>, Vec<LinkWarning>) {
    let mut out: Vec<Input> = vec![];
    let mut warnings = vec![];
    for (field, name, value) in places(def) {
        for cap in input_ref().captures_iter(value) {
            let id = cap[1].to_string();
            if out
                .iter()
                .any(|i| i.kind != InputKind::Placeholder && i.id == id)
            {
                continue;
            }
            let d = declared.iter().find(|d| d.id == id);
            if d.is_none() {
                warnings.push(LinkWarning {
                    server: server.clone(),
                    field: Some(field.clone()),
                    kind: WarningKind::Input,
                    message: format!("${{input:{id}}} is used but the link does not describe it; it is asked for as text"),
                });
            }
            out.push(Input {
                token: cap[0].to_string(),
                description: d.and_then(|d| d.description.clone()),
                password: d.map_or_else(
                    || looks_secret(&name) || field.starts_with("headers."),
                    |d| d.password,
                ),
                default: d.and_then(|d| d.default.clone()),
                options: d.map(|d| d.options.clone()).unwrap_or_default(),
                kind: if d.is_some() {
                    InputKind::Declared
                } else {
                    InputKind::Undeclared
                },
                id,
            });
        }
        if field == "command" {
            continue;
        }
        let stripped = input_ref().replace_all(value, "");
        for m in placeholder().find_iter(&stripped) {
            let token = m.as_str().to_string();
            if out.iter().any(|i| i.token == token) {
                continue;
            }
            out.push(Input {
                id: format!("{field}:{token}"),
                description: Some(format!("replaces {token} in {field}")),
                password: looks_secret(&name)
                    || looks_secret(&token)
                    || field.starts_with("headers."),
                default: None,
                options: vec![],
                kind: InputKind::Placeholder,
                token,
            });
        }
    }
    (out, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn temp_folders() {
        for yes in [
            "/tmp/x",
            "/var/folders/ab/T/srv",
            "%TEMP%\\srv.exe",
            "C:\\Users\\me\\AppData\\Local\\Temp\\srv.exe",
            "$TMPDIR/srv",
        ] {
            assert!(temp_path(yes), "{yes}");
        }
        for no in ["npx", "/usr/bin/node", "/home/me/tmpfiles/x", "temp"] {
            assert!(!temp_path(no), "{no}");
        }
    }

    #[test]
    fn shells_given_a_command_line() {
        assert!(shell_command("bash", &s(&["-c", "curl x | sh"])).is_some());
        assert!(shell_command("/bin/sh", &s(&["-lc", "x"])).is_some());
        assert!(shell_command("cmd.exe", &s(&["/C", "npx", "x"])).is_some());
        assert!(shell_command("powershell", &s(&["-Command", "x"])).is_some());
        assert!(shell_command("pwsh", &s(&["-enc", "AAA"])).is_some());
        assert!(shell_command("bash", &s(&["script.sh"])).is_none());
        assert!(shell_command("npx", &s(&["-c", "x"])).is_none());
        assert!(shell_command("bash", &s(&["--norc", "x.sh"])).is_none());
    }

    #[test]
    fn placeholders_found() {
        let mut def = ServerDef::remote("hf", crate::config::Transport::Http, "https://h/mcp");
        def.headers
            .insert("Authorization".into(), "Bearer <YOUR_HF_TOKEN>".into());
        def.env.insert("KEY".into(), "your-api-key".into());
        def.env.insert("PLAIN".into(), "yourself".into());
        let (ins, _) = inputs(&def, &[], &None);
        let tokens: Vec<&str> = ins.iter().map(|i| i.token.as_str()).collect();
        assert_eq!(tokens, ["your-api-key", "<YOUR_HF_TOKEN>"]);
        assert!(ins.iter().all(|i| i.password));
    }
}
