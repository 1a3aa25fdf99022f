//! One server's entry as text in its client's own format and field names,
//! for a form's "Edit as JSON/TOML" view, and that text read back.

use serde::Serialize;
use serde_json::Value;

use crate::config::ServerDef;
use crate::sources::read::{escape_pointer, parse};
use crate::sources::SourceSpec;
use crate::writer::doc::{apply_edits, DocEdit, Format, PathSeg};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EntryText {
    pub format: Format,
    pub text: String,
}

/// `def` as `spec`'s client would store it: the keys Switchboard writes,
/// without the enable flag (which may live outside the entry). The error
/// says what the client cannot store.
pub fn entry_text(spec: &SourceSpec, def: &ServerDef) -> Result<EntryText, String> {
    let entry = spec
        .dialect
        .to_entry(def)
        .map_err(|u| u.message(spec.client.display_name()))?;
    let text = match spec.format {
        Format::Json | Format::Jsonc => {
            serde_json::to_string_pretty(&Value::Object(entry)).unwrap_or_default() + "\n"
        }
        // TOML and YAML: the keys as the body of the server's table or mapping.
        Format::Toml | Format::Yaml => {
            let edits: Vec<DocEdit> = entry
                .into_iter()
                .map(|(k, value)| DocEdit::Set {
                    path: vec![PathSeg::Key(k)],
                    value,
                })
                .collect();
            apply_edits(spec.format, "", &edits).map_err(|e| e.to_string())?
        }
    };
    Ok(EntryText {
        format: spec.format,
        text,
    })
}

/// Read an entry typed in `spec`'s format. Anything Switchboard would not
/// keep on save is an error naming its line and field: a key the client
/// has that Switchboard does not edit, a value of the wrong type, an
/// invalid definition.
pub fn parse_entry_text(spec: &SourceSpec, name: &str, text: &str) -> Result<ServerDef, String> {
    let doc = parse(spec.format, text).map_err(|f| match f.line {
        Some(line) if !f.message.contains("line") => format!("line {line}: {}", f.message),
        _ => f.message,
    })?;
    let Value::Object(entry) = &doc.value else {
        return Err(format!(
            "the entry should be an object of fields, found {}",
            crate::sources::dialect::kind(&doc.value)
        ));
    };
    let at = |field: &str| match doc.line(&format!("/{}", escape_pointer(field))) {
        Some(line) => format!("line {line}: "),
        None => String::new(),
    };
    let owned = spec.dialect.owned_keys();
    if let Some(key) = entry.keys().find(|k| !owned.contains(&k.as_str())) {
        return Err(format!(
            "{}\"{key}\" is not a field Switchboard edits for {}; remove it here and change it in {} itself",
            at(key),
            spec.client.display_name(),
            spec.path.display()
        ));
    }
    let parsed = spec.dialect.parse_entry(name, &doc.value);
    if let Some(issue) = parsed.issues.first() {
        let field = issue
            .field
            .as_deref()
            .map(|f| f.split(['.', '[']).next().unwrap_or(f))
            .unwrap_or("");
        // Reading a file, Switchboard skips a bad value and says so; here the
        // user is typing, so the value is refused instead.
        let message = ["; ignored", "; the default is used"]
            .iter()
            .fold(issue.message.as_str(), |m, tail| {
                m.strip_suffix(tail).unwrap_or(m)
            });
        return Err(format!("{}{message}", at(field)));
    }
    if let Some(why) = parsed.not_runnable {
        return Err(format!("this entry is {why}"));
    }
    Ok(parsed.def)
}
