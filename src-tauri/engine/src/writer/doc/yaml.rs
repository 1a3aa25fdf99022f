//! Edits on block-style YAML text (goose's `config.yaml`).
//!
//! No Rust YAML library keeps comments and layout, so this edits lines: a key
//! is found by its indentation under its parent, and an edit replaces,
//! removes or renames only the lines of that key's value; every other line
//! stays byte for byte. It covers block mappings with plain or quoted keys
//! (what goose writes); anything else it cannot place surely (sequences of
//! servers, anchors, several documents) is refused. Every result is parsed
//! again and must hold exactly the edited value, else nothing is written.

use serde_json::{Map, Value};

use super::{display_path, path_error, DocEdit, DocError, PathSeg, Result};

struct Line<'a> {
    /// Byte offset of the line's start.
    start: usize,
    indent: usize,
    /// The line after its indentation, without the line break.
    content: &'a str,
}

impl Line<'_> {
    fn significant(&self) -> bool {
        let c = self.content.trim();
        !c.is_empty() && !c.starts_with('#')
    }
    fn is_item(&self) -> bool {
        self.content == "-" || self.content.starts_with("- ")
    }
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = vec![];
    let mut start = 0;
    while start < text.len() {
        let end = text[start..]
            .find('\n')
            .map(|i| start + i + 1)
            .unwrap_or(text.len());
        let raw = text[start..end].trim_end_matches(['\n', '\r']);
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        out.push(Line {
            start,
            indent,
            content: &raw[indent..],
        });
        start = end;
    }
    out
}

/// The key of a `key: value` line, the length of its spelling, and the text after its colon.
fn key_of(content: &str) -> Option<(String, usize, &str)> {
    if content.starts_with('-') && (content.len() == 1 || content[1..].starts_with(' ')) {
        return None;
    }
    let (key, len) = if let Some(q @ ('"' | '\'')) = content.chars().next() {
        let close = content[1..].find(q)? + 1;
        let key = if q == '"' {
            serde_json::from_str::<String>(&content[..=close]).ok()?
        } else {
            content[1..close].to_string()
        };
        (key, close + 1)
    } else {
        let colon = content
            .match_indices(':')
            .map(|(i, _)| i)
            .find(|&i| content[i + 1..].is_empty() || content[i + 1..].starts_with(' '))?;
        (content[..colon].trim_end().to_string(), colon)
    };
    let rest = content[len..].trim_start().strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    Some((key, len, rest.trim()))
}

/// A key found in the text: its line and the lines its value spans.
struct Found {
    line: usize,
    /// One past the value's last significant line.
    end: usize,
    indent: usize,
    /// The value is written on the key's line (a scalar, `{}`, `[]`, …).
    inline: bool,
}

struct Doc<'a> {
    lines: Vec<Line<'a>>,
}

impl<'a> Doc<'a> {
    /// The indentation of the entries in `range`.
    fn child_indent(&self, range: (usize, usize)) -> Option<usize> {
        self.lines[range.0..range.1]
            .iter()
            .find(|l| l.significant())
            .map(|l| l.indent)
    }

    fn block_end(&self, line: usize, indent: usize) -> usize {
        let mut end = line + 1;
        let mut last = line + 1;
        while end < self.lines.len() {
            let l = &self.lines[end];
            if l.significant() {
                if l.indent < indent || (l.indent == indent && !l.is_item()) {
                    break;
                }
                last = end + 1;
            }
            end += 1;
        }
        // Comments and blank lines after the value belong to what follows.
        last
    }

    fn find(&self, range: (usize, usize), key: &str) -> Option<Found> {
        let indent = self.child_indent(range)?;
        (range.0..range.1).find_map(|i| {
            let l = &self.lines[i];
            if l.indent != indent || !l.significant() {
                return None;
            }
            let (k, _, rest) = key_of(l.content)?;
            (k == key).then(|| Found {
                line: i,
                end: self.block_end(i, indent),
                indent,
                inline: !(rest.is_empty() || rest.starts_with('#')),
            })
        })
    }

    /// Where `path` leads: every key found along it, and the range the next
    /// (missing) key would go into.
    fn walk(&self, path: &[PathSeg]) -> Result<(Vec<Found>, (usize, usize), usize)> {
        let mut found = vec![];
        let mut range = (0, self.lines.len());
        let mut parent_indent: Option<usize> = None;
        for (i, seg) in path.iter().enumerate() {
            let PathSeg::Key(key) = seg else {
                return Err(DocError::Unsupported("YAML"));
            };
            match self.find(range, key) {
                Some(f) => {
                    let inline = f.inline;
                    range = (f.line + 1, f.end);
                    parent_indent = Some(f.indent);
                    found.push(f);
                    if inline && i + 1 < path.len() {
                        break;
                    }
                }
                None => break,
            }
        }
        let indent = self
            .child_indent(range)
            .or(parent_indent.map(|p| p + 2))
            .unwrap_or(0);
        Ok((found, range, indent))
    }
}

fn plain_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && !k.starts_with(['-', '.'])
        && !matches!(
            k,
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "~"
        )
        && k.parse::<f64>().is_err()
}

fn yaml_key(k: &str) -> String {
    if plain_key(k) {
        k.to_string()
    } else {
        serde_json::to_string(k).unwrap_or_default()
    }
}

/// A scalar (or empty collection) as it would follow `key: `.
fn scalar(v: &Value) -> String {
    match v {
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::String(s) => {
            let y = serde_norway::to_string(s).unwrap_or_default();
            let y = y.trim_end_matches('\n');
            // Multi-line forms need the following lines; JSON's quoted string is valid YAML.
            if y.contains('\n') || s.chars().any(char::is_control) {
                serde_json::to_string(s).unwrap_or_default()
            } else {
                y.to_string()
            }
        }
        // Nested collections inside lists: JSON flow style is valid YAML.
        Value::Object(_) | Value::Array(_) => serde_json::to_string(v).unwrap_or_default(),
        other => serde_norway::to_string(other)
            .unwrap_or_default()
            .trim_end_matches('\n')
            .to_string(),
    }
}

/// `key: value` as block YAML at `indent`, items of lists `item_indent` deeper.
fn render(key: &str, v: &Value, indent: usize, item_indent: usize, nl: &str) -> String {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            let mut out = format!("{pad}{key}:{nl}");
            for (k, x) in m {
                out.push_str(&render(&yaml_key(k), x, indent + 2, item_indent, nl));
            }
            out
        }
        Value::Array(a) if !a.is_empty() => {
            let mut out = format!("{pad}{key}:{nl}");
            let ipad = " ".repeat(indent + item_indent);
            for x in a {
                match x {
                    Value::Object(m) if !m.is_empty() => {
                        // `- first: …` then the other keys under it.
                        let inner: String = m
                            .iter()
                            .map(|(k, y)| {
                                render(&yaml_key(k), y, indent + item_indent + 2, item_indent, nl)
                            })
                            .collect();
                        out.push_str(&format!("{ipad}- {}", &inner[indent + item_indent + 2..]));
                    }
                    _ => out.push_str(&format!("{ipad}- {}{nl}", scalar(x))),
                }
            }
            out
        }
        _ => format!("{pad}{key}: {}{nl}", scalar(v)),
    }
}

/// `edit` applied to a value in memory: what the text must read as afterwards.
fn edit_value(doc: &mut Value, edit: &DocEdit) {
    fn parent<'v>(
        v: &'v mut Value,
        path: &[PathSeg],
        create: bool,
    ) -> Option<&'v mut Map<String, Value>> {
        let mut at = v;
        for seg in path {
            let PathSeg::Key(k) = seg else { return None };
            if !at.is_object() && create {
                *at = Value::Object(Map::new());
            }
            let obj = at.as_object_mut()?;
            at = if create {
                obj.entry(k.clone()).or_insert(Value::Null)
            } else {
                obj.get_mut(k)?
            };
        }
        if !at.is_object() && create {
            *at = Value::Object(Map::new());
        }
        at.as_object_mut()
    }
    match edit {
        DocEdit::Set { path, value } => {
            if let Some((PathSeg::Key(k), rest)) = path.split_last() {
                if let Some(obj) = parent(doc, rest, true) {
                    obj.insert(k.clone(), value.clone());
                }
            }
        }
        DocEdit::Remove { path } => {
            if let Some((PathSeg::Key(k), rest)) = path.split_last() {
                if let Some(obj) = parent(doc, rest, false) {
                    obj.remove(k);
                }
            }
        }
        DocEdit::RenameKey { path, new_key } => {
            if let Some((PathSeg::Key(k), rest)) = path.split_last() {
                if let Some(obj) = parent(doc, rest, false) {
                    if let Some(v) = obj.remove(k) {
                        obj.insert(new_key.clone(), v);
                    }
                }
            }
        }
    }
}

fn value_at<'v>(doc: &'v Value, path: &[PathSeg]) -> Option<&'v Value> {
    path.iter().try_fold(doc, |v, seg| match seg {
        PathSeg::Key(k) => v.get(k),
        PathSeg::Index(i) => v.get(i),
    })
}

/// What the text reads as: an empty text is an empty mapping.
fn parse(text: &str) -> Result<Value> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_norway::from_str(text).map_err(|e| DocError::Parse(e.to_string()))
}

/// One edit on the text; `doc` is what the text reads as now.
fn apply_one(text: &str, doc: &Value, edit: &DocEdit, nl: &str) -> Result<String> {
    let d = Doc { lines: lines(text) };
    let path = match edit {
        DocEdit::Set { path, .. } | DocEdit::Remove { path } | DocEdit::RenameKey { path, .. } => {
            path
        }
    };
    if path.is_empty() {
        return Err(path_error(path, "the whole document cannot be replaced"));
    }
    let (found, range, indent) = d.walk(path)?;
    let splice =
        |from: usize, to: usize, with: &str| format!("{}{with}{}", &text[..from], &text[to..]);
    let line_start = |i: usize| d.lines.get(i).map(|l| l.start).unwrap_or(text.len());
    let complete = found.len() == path.len();
    if !complete && found.last().is_some_and(|f| f.inline) {
        // The path goes through a value written inline (`envs: {}`): that
        // whole value is rewritten.
        let at = &path[..found.len()];
        let mut new_doc = doc.clone();
        edit_value(&mut new_doc, edit);
        let value = value_at(&new_doc, at).cloned().unwrap_or(Value::Null);
        return apply_one(
            text,
            doc,
            &DocEdit::Set {
                path: at.to_vec(),
                value,
            },
            nl,
        )
        .map_err(|e| match e {
            DocError::Unsupported(_) => {
                path_error(path, format!("cannot edit inside {}", display_path(at)))
            }
            other => other,
        });
    }
    match edit {
        DocEdit::Set { value, .. } => {
            if value_at(doc, path) == Some(value) {
                return Ok(text.to_string());
            }
            let item_indent = 2;
            if complete {
                let f = found.last().expect("a complete path found its key");
                let line = &d.lines[f.line];
                let key_text = &line.content[..key_len(line.content)];
                let rendered = render(
                    key_text,
                    value,
                    f.indent,
                    item_indent_of(&d, f).unwrap_or(item_indent),
                    nl,
                );
                Ok(splice(line.start, line_start(f.end), &rendered))
            } else {
                // Append the missing keys at the end of the deepest one found.
                let missing = &path[found.len()..];
                let mut nested = value.clone();
                for seg in missing[1..].iter().rev() {
                    let PathSeg::Key(k) = seg else {
                        return Err(DocError::Unsupported("YAML"));
                    };
                    let mut m = Map::new();
                    m.insert(k.clone(), nested);
                    nested = Value::Object(m);
                }
                let PathSeg::Key(first) = &missing[0] else {
                    return Err(DocError::Unsupported("YAML"));
                };
                let rendered = render(&yaml_key(first), &nested, indent, item_indent, nl);
                let at = line_start(
                    last_significant(&d, range)
                        .map(|i| i + 1)
                        .unwrap_or(range.0),
                );
                let sep = if at > 0 && !text[..at].ends_with('\n') {
                    nl
                } else {
                    ""
                };
                Ok(splice(at, at, &format!("{sep}{rendered}")))
            }
        }
        DocEdit::Remove { .. } => match (complete, found.last()) {
            (true, Some(f)) => Ok(splice(d.lines[f.line].start, line_start(f.end), "")),
            _ => Ok(text.to_string()),
        },
        DocEdit::RenameKey { new_key, .. } => {
            let f = found
                .last()
                .filter(|_| complete)
                .ok_or_else(|| path_error(path, "no such key"))?;
            let line = &d.lines[f.line];
            let from = line.start + line.indent;
            Ok(splice(
                from,
                from + key_len(line.content),
                &yaml_key(new_key),
            ))
        }
    }
}

/// Length of the key's spelling on a `key: value` line.
fn key_len(content: &str) -> usize {
    key_of(content).map(|(_, len, _)| len).unwrap_or(0)
}

/// How much deeper than its key a list's items are, as the file has it.
fn item_indent_of(d: &Doc, f: &Found) -> Option<usize> {
    d.lines[f.line + 1..f.end]
        .iter()
        .find(|l| l.significant() && l.is_item())
        .map(|l| l.indent - f.indent)
}

fn last_significant(d: &Doc, range: (usize, usize)) -> Option<usize> {
    (range.0..range.1).rev().find(|&i| d.lines[i].significant())
}

pub(super) fn apply(text: &str, edits: &[DocEdit]) -> Result<String> {
    if lines(text).iter().any(|l| {
        l.indent == 0 && (l.content == "---" || l.content.starts_with("--- ") || l.content == "...")
    }) || text.contains('\t')
    {
        return Err(DocError::Unsupported("YAML"));
    }
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let original = parse(text)?;
    let mut current = text.to_string();
    // An empty document written as `{}` (what a serializer writes for an
    // empty map) becomes block style once it gets a key.
    let significant: Vec<Line> = lines(text).into_iter().filter(Line::significant).collect();
    if let [only] = significant.as_slice() {
        if only.content.trim_end() == "{}" && edits.iter().any(|e| matches!(e, DocEdit::Set { .. }))
        {
            current = text.replacen("{}", "", 1);
        }
    }
    let mut doc = original;
    for edit in edits {
        current = apply_one(&current, &doc, edit, nl)?;
        edit_value(&mut doc, edit);
    }
    // The text must read exactly as the edits say; otherwise this editor
    // misread the layout and nothing is written.
    let read = parse(&current)?;
    let empty_is_null = |v: &Value| {
        if v.is_null() {
            Value::Object(Map::new())
        } else {
            v.clone()
        }
    };
    if empty_is_null(&read) != empty_is_null(&doc) {
        return Err(DocError::Unsupported("YAML"));
    }
    Ok(current)
}
