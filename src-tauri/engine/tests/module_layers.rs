//! The engine's modules depend on each other one way only: a module names
//! (`crate::…`) only modules of lower layers, never one of its own layer or
//! above. This test reads the engine's sources and fails on any other
//! reference, saying which file names what. `src-tauri/ARCHITECTURE.md`
//! explains the layers.
//!
//! The unit is a top-level module, except for `writer`, whose format layer
//! (`writer::doc`, `writer::atomic`) and history (`writer::diff`,
//! `writer::history`) sit far below its edit logic (`writer` itself:
//! `writer/mod.rs`, `edit.rs`, `summary.rs`). A lower layer names those
//! parts by their own path (`crate::writer::doc::PathSeg`), not through the
//! re-exports of `writer`. Comments and string literals are ignored; the
//! `switchboard` binary (`src/bin/`) is a separate crate on top of it all.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first. A unit may name units of the layers before its own.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "generic helpers below everything (work split over the cores)",
        &["parallel"],
    ),
    (
        "foundations: the model, the file formats and leaves that name no engine module",
        &[
            "config",
            "writer::doc",
            "writer::atomic",
            "host",
            "events",
            "error_code",
            "file_watch",
            "memory",
            "redact",
            "naming",
            "ports",
            "opener",
            "launch",
            "sse_client",
            "profile",
            "tokens",
        ],
    ),
    (
        "reading: where config files are and their dialects; sign-in; diagnosis",
        &["sources", "auth", "doctor"],
    ),
    (
        "project approvals; diffs of file contents; install links (read with the dialects)",
        &["trust", "writer::diff", "install_link"],
    ),
    ("the history of every write", &["writer::history"]),
    ("Switchboard's settings", &["settings"]),
    ("discovery: shadowing and priority", &["discovery"]),
    (
        "edits of client files (writer::edit); tool approvals",
        &["writer", "tool_trust"],
    ),
    (
        "project folders; the call journal (its entries carry tool_trust's findings)",
        &["projects", "journal"],
    ),
    ("supervision of the servers", &["manager"]),
    (
        "on top of the manager: the gateway, approvals, the file watcher",
        &["gateway", "approvals", "watch"],
    ),
    (
        "profiles: their servers, tools and costs; a team gateway's team servers",
        &["profiles", "team_servers"],
    ),
    ("connecting clients to the gateway", &["connect"]),
    (
        "applying profiles to clients' files or gateway entries",
        &["profile_apply"],
    ),
    ("the engine facade", &["engine"]),
    (
        "the MCP Registry catalog (installs through the engine)",
        &["registry"],
    ),
    (
        ".mcpb bundles (their secrets kept as registry installs keep them)",
        &["bundle"],
    ),
    (
        "sharing profiles: export and import (keychain names as installs give them)",
        &["profile_share"],
    ),
    (
        "the team gateway: the engine and its gateway served to a team (sign-in, access, metrics)",
        &["team"],
    ),
];

/// Units held to fewer modules than their layer allows.
const NARROW: &[(&str, &[&str])] = &[("sources", &["config", "host", "writer::doc"])];

/// References that go up, each with why it is still there. The test also
/// fails when one is no longer needed, so the list only shrinks.
const KNOWN_EXCEPTIONS: &[(&str, &str, &str)] = &[];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read the engine's src folder") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `writer` splits into the parts listed in `LAYERS`; every other module is
/// one unit.
fn unit_of(segments: &[&str]) -> String {
    match segments {
        ["writer", part, ..] if matches!(*part, "doc" | "atomic" | "diff" | "history") => {
            format!("writer::{part}")
        }
        [first, ..] => first.to_string(),
        [] => String::new(),
    }
}

/// The unit a source file belongs to; `None` for `lib.rs` and the binary.
fn unit_of_file(rel: &Path) -> Option<String> {
    let segments: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match segments.first().map(String::as_str) {
        None | Some("lib") | Some("bin") => None,
        _ => Some(unit_of(
            &segments.iter().map(String::as_str).collect::<Vec<_>>(),
        )),
    }
}

/// The code of a file with comments, string and char literals blanked out.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if b[i] == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && !b[..i]
                .last()
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            // A raw string: r"…", r#"…"#, …
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            j += 1;
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            i = j + close.len();
            out.push_str("\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' {
            // A char literal ('a', '\n', '\u{1F600}', '"'), else a lifetime.
            let rest = &text[i + 1..];
            let mut chars = rest.char_indices();
            match chars.next() {
                Some((_, '\\')) => {
                    // The closing quote is after the escaped character.
                    let end = rest
                        .get(2..)
                        .and_then(|r| r.find('\''))
                        .map_or(rest.len(), |e| e + 2);
                    i += 1 + end + 1;
                    out.push_str("' '");
                }
                Some((_, c)) if rest[c.len_utf8()..].starts_with('\'') => {
                    i += 1 + c.len_utf8() + 1;
                    out.push_str("' '");
                }
                _ => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let len = text[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&text[i..i + len]);
            i += len;
        }
    }
    out
}

/// Every path a `crate::` reference at `code[at..]` names, grouped imports
/// expanded: `crate::{config::X, writer::{doc::Y, atomic::Z}}` gives
/// `config::X`, `writer::doc::Y` and `writer::atomic::Z`.
fn paths_at(code: &str, at: usize) -> Vec<Vec<String>> {
    fn tree(b: &[u8], mut i: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
        let skip_ws = |i: &mut usize| {
            while *i < b.len() && b[*i].is_ascii_whitespace() {
                *i += 1;
            }
        };
        let mut segments = prefix;
        loop {
            skip_ws(&mut i);
            if b.get(i) == Some(&b'{') {
                i += 1;
                loop {
                    skip_ws(&mut i);
                    match b.get(i) {
                        None => return i,
                        Some(b'}') => return i + 1,
                        Some(b',') => i += 1,
                        _ => i = tree(b, i, segments.clone(), out),
                    }
                }
            }
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if i == start {
                out.push(segments);
                return i;
            }
            segments.push(String::from_utf8_lossy(&b[start..i]).into_owned());
            if b[i..].starts_with(b"::") {
                i += 2;
            } else {
                out.push(segments);
                return i;
            }
        }
    }
    let mut out = vec![];
    tree(code.as_bytes(), at, vec![], &mut out);
    out
}

/// For every unit, the units it names, each with the files naming it.
fn references() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = src_dir();
    let mut files = vec![];
    rust_files(&src, &mut files);
    let mut refs: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap().to_path_buf();
        let Some(unit) = unit_of_file(&rel) else {
            continue;
        };
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        let entry = refs.entry(unit.clone()).or_default();
        for (at, _) in code.match_indices("crate::") {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            for path in paths_at(&code, at + "crate::".len()) {
                let named = unit_of(&path.iter().map(String::as_str).collect::<Vec<_>>());
                if !named.is_empty() && named != unit {
                    entry
                        .entry(named)
                        .or_default()
                        .insert(format!("src/{}", rel.display()));
                }
            }
        }
    }
    refs
}

fn layer_of(unit: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, units)| units.contains(&unit))
}

#[test]
fn every_module_has_a_layer() {
    let mut missing: Vec<String> = references()
        .into_keys()
        .filter(|u| layer_of(u).is_none())
        .collect();
    // lib.rs's modules, in case one has no code naming anything.
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).unwrap();
    for line in lib.lines() {
        if let Some(name) = line.trim().strip_prefix("pub mod ") {
            let name = name.trim_end_matches(';').trim();
            if layer_of(name).is_none() && !missing.iter().any(|m| m == name) {
                missing.push(name.to_string());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "modules without a layer: {missing:?}. Add each to LAYERS in \
         tests/module_layers.rs (and to the layer list in src-tauri/ARCHITECTURE.md): \
         in the lowest layer above everything it names"
    );
}

#[test]
fn modules_name_only_lower_layers() {
    let mut problems = vec![];
    let mut exceptions_used = BTreeSet::new();
    for (unit, named) in references() {
        let Some(own) = layer_of(&unit) else {
            continue; // every_module_has_a_layer reports it
        };
        let narrow = NARROW.iter().find(|(u, _)| *u == unit).map(|(_, n)| *n);
        for (target, files) in named {
            let Some(theirs) = layer_of(&target) else {
                continue;
            };
            let allowed = theirs < own && narrow.is_none_or(|n| n.contains(&target.as_str()));
            if allowed {
                continue;
            }
            if KNOWN_EXCEPTIONS
                .iter()
                .any(|(from, to, _)| *from == unit && *to == target)
            {
                exceptions_used.insert((unit.clone(), target.clone()));
                continue;
            }
            let files: Vec<&str> = files.iter().map(String::as_str).collect();
            let rule = match narrow {
                Some(n) if theirs < own => format!("`{unit}` may name only {n:?}"),
                _ => format!(
                    "`{unit}` is in layer {own} ({}), `{target}` in layer {theirs} ({}); \
                     a module names only modules of lower layers",
                    LAYERS[own].0, LAYERS[theirs].0
                ),
            };
            problems.push(format!(
                "`{unit}` names `crate::{target}` in {}: {rule}. Move what it needs down \
                 (into `{unit}` or a lower module), or pass it in from above",
                files.join(", ")
            ));
        }
    }
    for (from, to, why) in KNOWN_EXCEPTIONS {
        if !exceptions_used.contains(&(from.to_string(), to.to_string())) {
            problems.push(format!(
                "`{from}` no longer names `{to}`: delete the exception \"{why}\" from \
                 KNOWN_EXCEPTIONS in tests/module_layers.rs"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "module layers broken (see src-tauri/ARCHITECTURE.md):\n- {}",
        problems.join("\n- ")
    );
}

#[test]
fn the_reader_sees_grouped_and_nested_imports() {
    let code = code_only(
        "use crate::{config::X, writer::{doc::Y, atomic::Z}};\n\
         // use crate::manager::Hidden;\n\
         let s = \"crate::gateway::InAString\"; let c = '\"'; fn f<'a>(_: &'a str) {}\n\
         let t = crate::sources::read::parse(f, r#\"crate::engine\"#);",
    );
    let mut named = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        for p in paths_at(&code, at + 7) {
            named.insert(unit_of(&p.iter().map(String::as_str).collect::<Vec<_>>()));
        }
    }
    let want: BTreeSet<String> = ["config", "writer::doc", "writer::atomic", "sources"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(named, want);
}
