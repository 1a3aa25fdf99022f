//! The one-line summaries history entries carry, in the user's words:
//! `update "github" in Cursor (args)`, `disable "notes" in Cline`,
//! `move "docs" from Cursor to Claude Desktop`.

use serde_json::{Map, Value};

use crate::discovery::entries;
use crate::sources::read::parse_parts_of_checked_bytes;
use crate::sources::SourceSpec;
use crate::writer::edit::ServerEdit;
use crate::writer::history::{FileWrite, Label};

/// The label of one server edit. For an update, which of the entry's keys
/// changed is read off the file before and after, in the client's own key
/// names, so it says what was written rather than what was asked.
pub fn for_edit(spec: &SourceSpec, edit: &ServerEdit) -> Label {
    let client = spec.client.display_name();
    let (name, summary) = match edit {
        ServerEdit::Add(def) => (
            def.name.clone(),
            format!("add \"{}\" to {client}", def.name),
        ),
        ServerEdit::Remove { name } => (name.clone(), format!("remove \"{name}\" from {client}")),
        ServerEdit::SetEnabled { name, enabled } => (
            name.clone(),
            format!(
                "{} \"{name}\" in {client}",
                if *enabled { "enable" } else { "disable" }
            ),
        ),
        ServerEdit::Rename { from, to } => (
            from.clone(),
            format!("rename \"{from}\" to \"{to}\" in {client}"),
        ),
        ServerEdit::Update { name, .. } | ServerEdit::Patch { name, .. } => {
            let (name, spec) = (name.clone(), spec.clone());
            return Label {
                server: Some(name.clone()),
                describe: Box::new(move |writes| {
                    let keys = changed_keys(&spec, &name, writes);
                    let what = if keys.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", keys.join(", "))
                    };
                    format!("update \"{name}\" in {}{what}", spec.client.display_name())
                }),
            };
        }
    };
    Label::fixed(Some(&name), summary)
}

pub fn for_copy(from: &SourceSpec, to: &SourceSpec, name: &str, remove_source: bool) -> Label {
    let verb = if remove_source { "move" } else { "copy" };
    Label::fixed(
        Some(name),
        format!(
            "{verb} \"{name}\" from {} to {}",
            from.client.display_name(),
            to.client.display_name()
        ),
    )
}

/// Keys of `name`'s entry in `spec`'s file that differ before and after (a
/// renamed entry is found as the one new name). Empty when unknown.
fn changed_keys(spec: &SourceSpec, name: &str, writes: &[FileWrite]) -> Vec<String> {
    let Some(w) = writes.iter().find(|w| w.path == spec.path) else {
        return vec![];
    };
    let doc = |bytes: &Option<Vec<u8>>| -> Option<Value> {
        parse_parts_of_checked_bytes(spec.format, bytes.as_deref()?, &[spec.container.path()])
            .map(|d| d.value)
    };
    // A large file's two sides are parsed side by side.
    let large = |b: &Option<Vec<u8>>| {
        b.as_ref()
            .is_some_and(|b| b.len() >= crate::writer::ASIDE_FROM)
    };
    let (before, after) = if large(&w.before) || large(&w.after) {
        std::thread::scope(|s| {
            let after = s.spawn(|| doc(&w.after));
            let before = doc(&w.before);
            (before, after.join().ok().flatten())
        })
    } else {
        (doc(&w.before), doc(&w.after))
    };
    let (Some(before), Some(after)) = (before, after) else {
        return vec![];
    };
    let mut sink = vec![];
    let old_entries = entries(spec, &before, &mut sink);
    let new_entries = entries(spec, &after, &mut sink);
    let Some(old) = old_entries.iter().find(|e| e.name == name) else {
        return vec![];
    };
    let (new, renamed) = match new_entries.iter().find(|e| e.name == name) {
        Some(e) => (e, false),
        None => {
            let mut fresh = new_entries
                .iter()
                .filter(|e| !old_entries.iter().any(|o| o.name == e.name));
            match (fresh.next(), fresh.next()) {
                (Some(e), None) => (e, true),
                _ => return vec![],
            }
        }
    };
    let empty = Map::new();
    let (a, b) = (
        old.value.as_object().unwrap_or(&empty),
        new.value.as_object().unwrap_or(&empty),
    );
    let mut keys: Vec<String> = if renamed { vec!["name".into()] } else { vec![] };
    keys.extend(
        a.keys()
            .chain(b.keys().filter(|k| !a.contains_key(*k)))
            .filter(|k| a.get(*k) != b.get(*k))
            .filter(|k| !(renamed && *k == "name"))
            .cloned(),
    );
    keys
}
