//! Reading a source file into a JSON value with line numbers, whatever its
//! format, so every warning can name file, line and field.

use std::collections::HashMap;

use jsonc_parser::ast;
use serde_json::{Map, Value};

use crate::writer::doc::{scan, Around, Format, PathSeg};

/// A parsed document: its value, and the 1-based line of every object key,
/// keyed by JSON pointer (`/mcpServers/github/args`).
#[derive(Debug, Clone, Default)]
pub struct LocatedDoc {
    pub value: Value,
    pub lines: HashMap<String, usize>,
}

impl LocatedDoc {
    pub fn line(&self, pointer: &str) -> Option<usize> {
        self.lines.get(pointer).copied()
    }
}

/// A parse failure with its position.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseFailure {
    pub line: Option<usize>,
    /// 1-based, in characters, where the format's parser says.
    pub column: Option<usize>,
    pub message: String,
}

pub fn escape_pointer(seg: &str) -> String {
    seg.replace('~', "~0").replace('/', "~1")
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn column_of(text: &str, offset: usize) -> usize {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    String::from_utf8_lossy(&before[start..]).chars().count() + 1
}

/// Offsets of line starts, for O(log n) offset → line lookups (a 1 MB
/// `~/.claude.json` has tens of thousands of keys).
struct LineIndex(Vec<usize>);

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex(starts)
    }
    fn line(&self, offset: usize) -> usize {
        match self.0.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }
}

pub fn parse(format: Format, text: &str) -> Result<LocatedDoc, ParseFailure> {
    match format {
        Format::Json | Format::Jsonc => parse_json(format, text),
        Format::Toml => parse_toml(text),
        Format::Yaml => parse_yaml(text),
    }
}

/// `parse`, but of a JSON(C) document only the values at `wanted` (and the
/// objects leading to them) are read into `value` and `lines`, with the same
/// values and lines the whole document would give them; the rest of the
/// text is only checked. A several-MB `~/.claude.json` is read at the cost
/// of one quick pass and its servers. Text the quick pass is unsure of,
/// TOML and YAML are read whole by `parse`, which also words every error.
pub fn parse_parts(
    format: Format,
    text: &str,
    wanted: &[&[PathSeg]],
) -> Result<LocatedDoc, ParseFailure> {
    parts(format, text, wanted, true)
}

/// `parse_parts` of text known to parse (what was just read and checked,
/// or just written): the text after the last wanted value is not read.
pub fn parse_parts_of_checked(
    format: Format,
    text: &str,
    wanted: &[&[PathSeg]],
) -> Result<LocatedDoc, ParseFailure> {
    parts(format, text, wanted, false)
}

/// `parse_parts_of_checked` of file contents known to parse. Of JSON(C),
/// the start of the file is tried first: where the wanted values are near
/// the top (Claude Code's `mcpServers` comes before its several MB of
/// projects), the rest is neither checked as UTF-8 nor read. `None` where
/// the contents are not UTF-8 or do not parse after all.
pub fn parse_parts_of_checked_bytes(
    format: Format,
    bytes: &[u8],
    wanted: &[&[PathSeg]],
) -> Option<LocatedDoc> {
    const START: usize = 64 * 1024;
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    if matches!(format, Format::Json | Format::Jsonc) && bytes.len() > START {
        let start = match std::str::from_utf8(&bytes[..START]) {
            Ok(text) => Some(text),
            // cut inside a character: up to it
            Err(e) if e.error_len().is_none() => {
                std::str::from_utf8(&bytes[..e.valid_up_to()]).ok()
            }
            Err(_) => None,
        };
        // Found in the start only when every wanted value is there: the
        // pass stops at the last one, before the cut.
        if let Some((doc, _)) = start.and_then(|t| json_parts(format, t, wanted, Pass::First)) {
            return Some(doc);
        }
    }
    let text = std::str::from_utf8(bytes).ok()?;
    parse_parts_of_checked(format, text, wanted).ok()
}

/// `parse_parts` of a file about to be edited under `wanted[0]`: of a
/// JSON(C) file, the same pass also takes the skeleton the edit needs
/// (`writer::doc::Around`), so a several-MB file is read through once.
pub fn parse_parts_around(
    format: Format,
    text: &str,
    wanted: &[&[PathSeg]],
) -> Result<(LocatedDoc, Option<Around>), ParseFailure> {
    let quick = match format {
        Format::Json | Format::Jsonc if wanted.is_empty() => {
            json_parts(format, text, wanted, Pass::Check)
        }
        Format::Json | Format::Jsonc => json_parts(format, text, wanted, Pass::Around),
        Format::Toml | Format::Yaml => None,
    };
    match quick {
        Some((doc, skeleton)) => Ok((
            doc,
            wanted.first().map(|path| Around {
                path: path.to_vec(),
                skeleton,
            }),
        )),
        None => Ok((parse(format, text)?, None)),
    }
}

fn parts(
    format: Format,
    text: &str,
    wanted: &[&[PathSeg]],
    check: bool,
) -> Result<LocatedDoc, ParseFailure> {
    let pass = match check {
        true => Pass::Check,
        false => Pass::First,
    };
    match format {
        Format::Json | Format::Jsonc => match json_parts(format, text, wanted, pass) {
            Some((doc, _)) => Ok(doc),
            None => parse(format, text),
        },
        Format::Toml | Format::Yaml => parse(format, text),
    }
}

/// How `json_parts` goes over the text.
#[derive(Clone, Copy, PartialEq)]
enum Pass {
    /// All of it, checking it (`scan::locate`).
    Check,
    /// Up to the last wanted value, of text known to parse (`scan::locate_first`).
    First,
    /// All of it, checking it, with the skeleton around `wanted[0]`
    /// (`scan::locate_around`).
    Around,
}

fn json_parts(
    format: Format,
    text: &str,
    wanted: &[&[PathSeg]],
    pass: Pass,
) -> Option<(LocatedDoc, Option<scan::Skeleton>)> {
    // Keys only: a document whose root is not an object has none of them,
    // and reads as `{}` here, as everywhere it is looked into by key.
    let keys_only = |w: &&[PathSeg]| w.iter().all(|s| matches!(s, PathSeg::Key(_)));
    if wanted.iter().any(|w| w.is_empty()) || !wanted.iter().all(keys_only) {
        return None; // the whole document, or an array element, is wanted
    }
    let jsonc = format == Format::Jsonc;
    let (found, skeleton) = match pass {
        Pass::Check => (scan::locate(text, jsonc, wanted).ok()?, None),
        Pass::First => (scan::locate_first(text, jsonc, wanted).ok()?, None),
        Pass::Around => scan::locate_around(text, jsonc, wanted, 0).ok()?,
    };
    let line_at =
        |offset: usize| memchr::memchr_iter(b'\n', &text.as_bytes()[..offset]).count() + 1;
    let mut doc = LocatedDoc {
        value: Value::Object(Map::new()),
        lines: HashMap::new(),
    };
    for (path, found) in wanted.iter().zip(&found) {
        let Some(found) = found else { continue };
        let mut pointer = String::new();
        for (seg, key_at) in path.iter().zip(&found.keys) {
            pointer.push('/');
            if let PathSeg::Key(k) = seg {
                pointer.push_str(&escape_pointer(k));
                doc.lines.insert(pointer.clone(), line_at(*key_at));
            }
        }
        let part = parse_json(format, &text[found.value.clone()]).ok()?;
        let base = line_at(found.value.start) - 1;
        doc.lines.extend(
            part.lines
                .into_iter()
                .map(|(p, line)| (format!("{pointer}{p}"), base + line)),
        );
        put(&mut doc.value, path, part.value)?;
    }
    Some((doc, skeleton))
}

/// Set the value at `path` (keys only) in `root`, adding the objects on the way.
fn put(root: &mut Value, path: &[PathSeg], value: Value) -> Option<()> {
    let (PathSeg::Key(last), parents) = path.split_last()? else {
        return None;
    };
    let mut at = root;
    for seg in parents {
        let PathSeg::Key(k) = seg else { return None };
        at = at
            .as_object_mut()?
            .entry(k.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    at.as_object_mut()?.insert(last.clone(), value);
    Some(())
}

fn parse_json(format: Format, text: &str) -> Result<LocatedDoc, ParseFailure> {
    let strict = format == Format::Json;
    let opts = jsonc_parser::ParseOptions {
        allow_comments: !strict,
        allow_trailing_commas: !strict,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        ..Default::default()
    };
    let res =
        jsonc_parser::parse_to_ast(text, &Default::default(), &opts).map_err(|e| ParseFailure {
            line: Some(e.line_display()),
            column: Some(e.column_display()),
            message: format!(
                "{} (line {}, column {})",
                e.kind(),
                e.line_display(),
                e.column_display()
            ),
        })?;
    let mut doc = LocatedDoc::default();
    let index = LineIndex::new(text);
    doc.value = match res.value {
        Some(v) => convert_ast(&v, &index, "", &mut doc.lines),
        None => Value::Object(Map::new()),
    };
    Ok(doc)
}

fn convert_ast(
    v: &ast::Value,
    text: &LineIndex,
    ptr: &str,
    lines: &mut HashMap<String, usize>,
) -> Value {
    match v {
        ast::Value::StringLit(s) => Value::String(s.value.to_string()),
        ast::Value::NumberLit(n) => {
            serde_json::from_str::<Value>(n.value).unwrap_or(Value::String(n.value.to_string()))
        }
        ast::Value::BooleanLit(b) => Value::Bool(b.value),
        ast::Value::NullKeyword(_) => Value::Null,
        ast::Value::Array(a) => Value::Array(
            a.elements
                .iter()
                .enumerate()
                .map(|(i, e)| convert_ast(e, text, &format!("{ptr}/{i}"), lines))
                .collect(),
        ),
        ast::Value::Object(o) => {
            let mut m = Map::new();
            for p in &o.properties {
                let name = p.name.as_str().to_string();
                let child = format!("{ptr}/{}", escape_pointer(&name));
                lines.insert(child.clone(), text.line(p.range.start));
                let val = convert_ast(&p.value, text, &child, lines);
                m.insert(name, val);
            }
            Value::Object(m)
        }
    }
}

fn parse_toml(text: &str) -> Result<LocatedDoc, ParseFailure> {
    let doc: toml_edit::Document<String> = text.parse().map_err(|e: toml_edit::TomlError| {
        let line = e.span().map(|s| line_of(text, s.start));
        let column = e.span().map(|s| column_of(text, s.start));
        ParseFailure {
            line,
            column,
            message: e.message().to_string()
                + &match (line, column) {
                    (Some(l), Some(c)) => format!(" (line {l}, column {c})"),
                    (Some(l), None) => format!(" (line {l})"),
                    _ => String::new(),
                },
        }
    })?;
    let mut out = LocatedDoc::default();
    let index = LineIndex::new(text);
    out.value = toml_table(doc.as_table(), &index, "", &mut out.lines);
    Ok(out)
}

fn toml_table(
    t: &dyn toml_edit::TableLike,
    text: &LineIndex,
    ptr: &str,
    lines: &mut HashMap<String, usize>,
) -> Value {
    let mut m = Map::new();
    for (k, item) in t.iter() {
        let child = format!("{ptr}/{}", escape_pointer(k));
        let span = t.key(k).and_then(|key| key.span()).or_else(|| item.span());
        if let Some(s) = span {
            lines.insert(child.clone(), text.line(s.start));
        }
        m.insert(k.to_string(), toml_item(item, text, &child, lines));
    }
    Value::Object(m)
}

fn toml_item(
    item: &toml_edit::Item,
    text: &LineIndex,
    ptr: &str,
    lines: &mut HashMap<String, usize>,
) -> Value {
    match item {
        toml_edit::Item::None => Value::Null,
        toml_edit::Item::Value(v) => toml_value(v, text, ptr, lines),
        toml_edit::Item::Table(t) => toml_table(t, text, ptr, lines),
        toml_edit::Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, t)| toml_table(t, text, &format!("{ptr}/{i}"), lines))
                .collect(),
        ),
    }
}

fn toml_value(
    v: &toml_edit::Value,
    text: &LineIndex,
    ptr: &str,
    lines: &mut HashMap<String, usize>,
) -> Value {
    use toml_edit::Value as T;
    match v {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => serde_json::Number::from_f64(*f.value())
            .map(Value::Number)
            .unwrap_or(Value::Null),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, e)| toml_value(e, text, &format!("{ptr}/{i}"), lines))
                .collect(),
        ),
        T::InlineTable(t) => toml_table(t, text, ptr, lines),
    }
}

fn parse_yaml(text: &str) -> Result<LocatedDoc, ParseFailure> {
    if text.trim().is_empty() {
        return Ok(LocatedDoc {
            value: Value::Object(Map::new()),
            lines: HashMap::new(),
        });
    }
    let value: Value = serde_norway::from_str(text).map_err(|e| {
        let line = e.location().map(|l| l.line());
        ParseFailure {
            line,
            column: e.location().map(|l| l.column()),
            message: e.to_string(),
        }
    })?;
    // serde_norway has no spans for values; find each key's line by its
    // indentation-aware text position, which is what a user needs to look at.
    let mut lines = HashMap::new();
    yaml_lines(&value, text, "", 0, &mut lines);
    Ok(LocatedDoc { value, lines })
}

fn yaml_lines(
    v: &Value,
    text: &str,
    ptr: &str,
    from_line: usize,
    lines: &mut HashMap<String, usize>,
) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let p = format!("{ptr}/{}", escape_pointer(k));
                let found = text
                    .lines()
                    .enumerate()
                    .skip(from_line)
                    .find(|(_, l)| {
                        let t = l.trim_start().trim_start_matches("- ");
                        t.starts_with(&format!("{k}:"))
                            || t.starts_with(&format!("\"{k}\":"))
                            || t.starts_with(&format!("'{k}':"))
                    })
                    .map(|(i, _)| i);
                if let Some(i) = found {
                    lines.insert(p.clone(), i + 1);
                }
                yaml_lines(child, text, &p, found.unwrap_or(from_line), lines);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                yaml_lines(child, text, &format!("{ptr}/{i}"), from_line, lines);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read from the start of a large file or from all of it, the values
    /// and lines are the whole file's: wanted values near the top, past the
    /// first 64 KB, missing, and a character cut in two at 64 KB.
    #[test]
    fn values_read_from_the_start_of_a_file_are_the_whole_files() {
        let key = |k: &str| PathSeg::Key(k.into());
        let servers = [key("mcpServers")];
        let late = [key("projects"), key("/p"), key("mcpServers")];
        let missing = [key("nope")];
        for pad in [65_530, 65_531, 65_532, 65_533, 70_000] {
            // `é` is two bytes: one of the pads cuts it at 64 KB
            let filler = format!("\"{}\"", "é".repeat(pad / 2));
            let text = format!(
                "\u{feff}{{\n  \"mcpServers\": {{\"a\": {{\"command\": \"x\"}}}},\n  \"history\": [{filler}],\n  \"projects\": {{\"/p\": {{\"mcpServers\": {{\"b\": {{\"command\": \"y\"}}}}}}}}\n}}\n"
            );
            let body = text.strip_prefix('\u{feff}').unwrap();
            for wanted in [&servers[..], &late[..], &missing[..]] {
                let whole = parse_parts_of_checked(Format::Json, body, &[wanted]).unwrap();
                let read =
                    parse_parts_of_checked_bytes(Format::Json, text.as_bytes(), &[wanted]).unwrap();
                assert_eq!(read.value, whole.value, "{wanted:?} with {pad}");
                assert_eq!(read.lines, whole.lines, "{wanted:?} with {pad}");
            }
        }
        let mut broken = b"{\"mcpServers\": {}, \"x\": \"".to_vec();
        broken.extend(vec![b'a'; 70_000]);
        broken.extend(vec![0xff; 10]);
        broken.extend(b"\"}");
        assert!(
            parse_parts_of_checked_bytes(Format::Json, &broken, &[&missing]).is_none(),
            "not UTF-8 past the start, and the values are not all there: none"
        );
        // the servers come first: the rest is not read at all
        let read = parse_parts_of_checked_bytes(Format::Json, &broken, &[&servers]).unwrap();
        assert_eq!(read.value, serde_json::json!({"mcpServers": {}}));
    }
}
