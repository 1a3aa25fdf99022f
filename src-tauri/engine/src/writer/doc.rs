//! Format-level edits on a config document's text.
//!
//! JSON and JSONC go through one concrete syntax tree (`jsonc_parser::cst`,
//! plain JSON being a subset), TOML through `toml_edit::DocumentMut`. Both
//! keep every byte that an edit does not touch: comments, blank lines,
//! indentation, key order and keys Switchboard does not own. YAML is refused
//! because no Rust YAML library round-trips comments.

use crate::config::Format;

/// One step of a path into a document: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg {
    Key(String),
    Index(usize),
}

/// A structural edit. Paths address values from the document root.
#[derive(Debug, Clone, PartialEq)]
pub enum DocEdit {
    /// Set the value at `path`, creating missing parent objects (never arrays).
    /// Minimal: when old and new are both objects, only changed keys are
    /// rewritten, absent keys removed, new keys appended in `value`'s order;
    /// otherwise (scalars, arrays) the old value is replaced if it differs.
    /// Setting a value equal to the current one changes no byte.
    Set { path: Vec<PathSeg>, value: serde_json::Value },
    /// Remove the value at `path` (object property or array element), with
    /// its separator; a missing path is not an error.
    Remove { path: Vec<PathSeg> },
    /// Rename the object key at `path` (last segment must be a Key) to
    /// `new_key`, keeping its value's bytes and its position.
    RenameKey { path: Vec<PathSeg>, new_key: String },
}

#[derive(Debug, thiserror::Error)]
pub enum DocError {
    #[error("cannot parse: {0}")]
    Parse(String),
    #[error("{path}: {message}")]
    Path { path: String, message: String },
    #[error("{0} files cannot be edited without losing their comments and layout")]
    Unsupported(&'static str),
}

pub type Result<T, E = DocError> = std::result::Result<T, E>;

/// Apply `edits` in order to `text` (a document in `format`), returning the
/// new text. Every byte outside the edited values is kept.
///
/// An empty (or whitespace/comment-only) document is treated as `{}` for
/// JSON(C) and as an empty TOML document. The result is re-parsed before it
/// is returned, so a caller never gets text it could not read back.
pub fn apply_edits(format: Format, text: &str, edits: &[DocEdit]) -> Result<String> {
    // A UTF-8 byte order mark is not part of either grammar; keep it aside so
    // the file keeps it.
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    };
    let edited = match format {
        Format::Json | Format::Jsonc => jsonc::apply(body, edits)?,
        Format::Toml => toml::apply(body, edits)?,
        Format::Yaml => return Err(DocError::Unsupported("YAML")),
    };
    Ok(format!("{bom}{edited}"))
}

/// `mcpServers."my.server".args[1]`: how a path reads in error messages.
pub fn display_path(path: &[PathSeg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            PathSeg::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                let bare = !key.is_empty()
                    && key.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-');
                if bare {
                    out.push_str(key);
                } else {
                    out.push_str(&serde_json::to_string(key).unwrap_or_default());
                }
            }
            PathSeg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if out.is_empty() {
        out.push_str("(document root)");
    }
    out
}

fn path_error(path: &[PathSeg], message: impl Into<String>) -> DocError {
    DocError::Path { path: display_path(path), message: message.into() }
}

/// `(line, column)`, both 1-based, of byte `offset` in `text`; columns count chars.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    (line, before[line_start..].chars().count() + 1)
}

mod jsonc {
    //! Edits through jsonc-parser's CST. Its insert/append APIs pick up the
    //! surrounding indentation, newline kind and trailing-comma style, and
    //! `remove` takes the property's comma and line with it.

    use jsonc_parser::cst::{
        CstContainerNode, CstInputValue, CstLeafNode, CstNode, CstObject, CstRootNode, ObjectPropName,
    };
    use jsonc_parser::ParseOptions;
    use serde_json::Value;

    use super::{path_error, DocEdit, DocError, PathSeg, Result};

    pub(super) fn apply(text: &str, edits: &[DocEdit]) -> Result<String> {
        let options = ParseOptions::default();
        // The root must outlive every node taken from it (the CST holds weak
        // parent links), so it stays bound for the whole function.
        let root = CstRootNode::parse(text, &options).map_err(|e| DocError::Parse(e.to_string()))?;
        for edit in edits {
            match edit {
                DocEdit::Set { path, value } => set(&root, path, value)?,
                DocEdit::Remove { path } => remove(&root, path),
                DocEdit::RenameKey { path, new_key } => rename(&root, path, new_key)?,
            }
        }
        let out = root.to_string();
        if out == text {
            return Ok(out);
        }
        if let Err(e) = CstRootNode::parse(&out, &options) {
            let path = edits.first().map(edit_path).unwrap_or_default();
            return Err(path_error(path, format!("the edit would leave the file unreadable ({e})")));
        }
        Ok(out)
    }

    fn edit_path(edit: &DocEdit) -> &[PathSeg] {
        match edit {
            DocEdit::Set { path, .. } | DocEdit::Remove { path } | DocEdit::RenameKey { path, .. } => path,
        }
    }

    /// The plain value a node stands for (comments dropped), or `None` for
    /// something that is not a value.
    fn node_value(node: &CstNode) -> Option<Value> {
        jsonc_parser::parse_to_serde_value::<Option<Value>>(&node.to_string(), &ParseOptions::default())
            .ok()
            .flatten()
    }

    fn to_input(value: &Value) -> CstInputValue {
        match value {
            Value::Null => CstInputValue::Null,
            Value::Bool(b) => CstInputValue::Bool(*b),
            Value::Number(n) => CstInputValue::Number(n.to_string()),
            Value::String(s) => CstInputValue::String(s.clone()),
            Value::Array(items) => CstInputValue::Array(items.iter().map(to_input).collect()),
            Value::Object(map) => CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), to_input(v))).collect()),
        }
    }

    /// The root value, with an empty document read as `{}`.
    fn root_value(root: &CstRootNode, create: bool) -> Option<CstNode> {
        match root.value() {
            Some(value) => Some(value),
            None if create => root.object_value_or_create().map(CstNode::from),
            None => None,
        }
    }

    /// The node at `path`. With `create`, missing objects along the way are
    /// added; otherwise a missing step gives `Ok(None)`.
    fn walk(root: &CstRootNode, path: &[PathSeg], create: bool) -> Result<Option<CstNode>> {
        let Some(mut node) = root_value(root, create) else {
            return Ok(None);
        };
        for (depth, seg) in path.iter().enumerate() {
            let here = &path[..depth];
            node = match seg {
                PathSeg::Key(key) => {
                    let Some(object) = node.as_object() else {
                        if create {
                            return Err(path_error(here, "is not an object"));
                        }
                        return Ok(None);
                    };
                    match object.get(key).and_then(|prop| prop.value()) {
                        Some(value) => value,
                        None if create => {
                            match object.get(key) {
                                // `"key":` with no value only survives in broken input
                                Some(prop) => prop.set_value(CstInputValue::Object(Vec::new())),
                                None => {
                                    object.append(key, CstInputValue::Object(Vec::new()));
                                }
                            }
                            match object.get(key).and_then(|prop| prop.value()) {
                                Some(value) => value,
                                None => return Err(path_error(&path[..=depth], "could not be created")),
                            }
                        }
                        None => return Ok(None),
                    }
                }
                PathSeg::Index(index) => {
                    let Some(array) = node.as_array() else {
                        if create {
                            return Err(path_error(here, "is not an array"));
                        }
                        return Ok(None);
                    };
                    match array.elements().get(*index) {
                        Some(element) => element.clone(),
                        None if create => {
                            return Err(path_error(&path[..=depth], "is past the end of the array"));
                        }
                        None => return Ok(None),
                    }
                }
            };
        }
        Ok(Some(node))
    }

    fn set(root: &CstRootNode, path: &[PathSeg], value: &Value) -> Result<()> {
        let Some((last, parents)) = path.split_last() else {
            match root.value() {
                Some(node) => update(node, value),
                None => root.set_value(to_input(value)),
            }
            return Ok(());
        };
        let container = walk(root, parents, true)?.ok_or_else(|| path_error(parents, "could not be created"))?;
        match last {
            PathSeg::Key(key) => {
                let object = container.as_object().ok_or_else(|| path_error(parents, "is not an object"))?;
                match object.get(key) {
                    Some(prop) => match prop.value() {
                        Some(node) => update(node, value),
                        None => prop.set_value(to_input(value)),
                    },
                    None => {
                        object.append(key, to_input(value));
                    }
                }
            }
            PathSeg::Index(index) => {
                let array = container.as_array().ok_or_else(|| path_error(parents, "is not an array"))?;
                let elements = array.elements();
                match elements.get(*index) {
                    Some(node) => update(node.clone(), value),
                    None if *index == elements.len() => {
                        array.append(to_input(value));
                    }
                    None => return Err(path_error(path, format!("is past the end of the array ({} elements)", elements.len()))),
                }
            }
        }
        Ok(())
    }

    /// Make `node` hold `value`, touching as little as possible.
    fn update(node: CstNode, value: &Value) {
        if let (Some(object), Value::Object(map)) = (node.as_object(), value) {
            update_object(&object, map);
            return;
        }
        if node_value(&node).as_ref() == Some(value) {
            return;
        }
        replace(node, to_input(value));
    }

    fn update_object(object: &CstObject, map: &serde_json::Map<String, Value>) {
        for prop in object.properties() {
            // a name that cannot be decoded is not ours to judge; leave it
            let Some(name) = prop.decoded_name() else { continue };
            match map.get(&name) {
                None => prop.remove(),
                Some(new_value) => match prop.value() {
                    Some(old) => update(old, new_value),
                    None => prop.set_value(to_input(new_value)),
                },
            }
        }
        for (key, new_value) in map {
            if object.get(key).is_none() {
                object.append(key, to_input(new_value));
            }
        }
    }

    fn replace(node: CstNode, input: CstInputValue) {
        match node.parent() {
            Some(CstContainerNode::ObjectProp(prop)) => prop.set_value(input),
            Some(CstContainerNode::Root(root)) => root.set_value(input),
            _ => {
                let _ = match node {
                    CstNode::Container(CstContainerNode::Object(n)) => n.replace_with(input),
                    CstNode::Container(CstContainerNode::Array(n)) => n.replace_with(input),
                    CstNode::Leaf(CstLeafNode::StringLit(n)) => n.replace_with(input),
                    CstNode::Leaf(CstLeafNode::NumberLit(n)) => n.replace_with(input),
                    CstNode::Leaf(CstLeafNode::BooleanLit(n)) => n.replace_with(input),
                    CstNode::Leaf(CstLeafNode::NullKeyword(n)) => n.replace_with(input),
                    CstNode::Leaf(CstLeafNode::WordLit(n)) => n.replace_with(input),
                    _ => None,
                };
            }
        }
    }

    fn remove(root: &CstRootNode, path: &[PathSeg]) {
        let Some((last, parents)) = path.split_last() else {
            if let Some(value) = root.value() {
                value.remove();
            }
            return;
        };
        let Ok(Some(container)) = walk(root, parents, false) else {
            return;
        };
        match last {
            PathSeg::Key(key) => {
                if let Some(object) = container.as_object() {
                    // with duplicate keys the last one wins when read, so all go
                    while let Some(prop) = object.get(key) {
                        prop.remove();
                    }
                }
            }
            PathSeg::Index(index) => {
                if let Some(element) = container.as_array().and_then(|a| a.elements().get(*index).cloned()) {
                    element.remove();
                }
            }
        }
    }

    fn rename(root: &CstRootNode, path: &[PathSeg], new_key: &str) -> Result<()> {
        let Some((PathSeg::Key(old_key), parents)) = path.split_last() else {
            return Err(path_error(path, "only an object key can be renamed"));
        };
        let container = walk(root, parents, false)?.ok_or_else(|| path_error(path, "does not exist"))?;
        let object = container.as_object().ok_or_else(|| path_error(parents, "is not an object"))?;
        let prop = object.get(old_key).ok_or_else(|| path_error(path, "does not exist"))?;
        if old_key == new_key {
            return Ok(());
        }
        if object.get(new_key).is_some() {
            return Err(path_error(path, format!("cannot be renamed: \"{new_key}\" already exists")));
        }
        let quoted = serde_json::to_string(new_key).unwrap_or_else(|_| format!("\"{new_key}\""));
        match prop.name() {
            Some(ObjectPropName::String(name)) => name.set_raw_value(quoted),
            Some(ObjectPropName::Word(name)) => {
                // keep an unquoted (JSON5-style) key unquoted when it can be
                let bare = new_key.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
                    && new_key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
                name.set_raw_value(if bare { new_key.to_string() } else { quoted });
            }
            None => return Err(path_error(path, "has no name to rename")),
        }
        Ok(())
    }
}

mod toml {
    //! Edits through `toml_edit::DocumentMut`, which keeps comments and layout
    //! of everything it is not asked to change.
    //!
    //! New objects directly under a `[table]` become `[table.sub]` headers when
    //! they hold plain values (Codex's `[mcp_servers.name]`), or implicit
    //! parents when they hold only objects; anything deeper (`env`, `headers`)
    //! becomes an inline table, as in Codex's docs: `env = { KEY = "v" }`.

    use serde_json::Value as Json;
    use toml_edit::{Array, ArrayOfTables, DocumentMut, InlineTable, Item, Key, Table, Value};

    use super::{line_column, path_error, DocEdit, DocError, PathSeg, Result};

    pub(super) fn apply(text: &str, edits: &[DocEdit]) -> Result<String> {
        let mut doc: DocumentMut = text.parse().map_err(|e| parse_error(text, &e))?;
        let mut changed = false;
        for edit in edits {
            changed |= match edit {
                DocEdit::Set { path, value } => set(doc.as_item_mut(), path, 0, value)?,
                DocEdit::Remove { path } => remove(doc.as_item_mut(), path),
                DocEdit::RenameKey { path, new_key } => rename(doc.as_item_mut(), path, new_key)?,
            };
        }
        // toml_edit re-renders the whole document; when nothing changed the
        // original text is the only way to be sure no byte moved
        if !changed {
            return Ok(text.to_string());
        }
        let out = doc.to_string();
        if let Err(e) = out.parse::<DocumentMut>() {
            let path = edits.first().map(edit_path).unwrap_or_default();
            return Err(path_error(
                path,
                format!("the edit would leave the file unreadable ({})", parse_error(&out, &e)),
            ));
        }
        Ok(out)
    }

    fn edit_path(edit: &DocEdit) -> &[PathSeg] {
        match edit {
            DocEdit::Set { path, .. } | DocEdit::Remove { path } | DocEdit::RenameKey { path, .. } => path,
        }
    }

    fn parse_error(text: &str, error: &toml_edit::TomlError) -> DocError {
        let message = error.message().trim().trim_end_matches('.').to_string();
        match error.span() {
            Some(span) => {
                let (line, column) = line_column(text, span.start);
                DocError::Parse(format!("{message} on line {line} column {column}"))
            }
            None => DocError::Parse(message),
        }
    }

    /// The plain value of an item, for comparisons. Datetimes read as strings.
    fn item_to_json(item: &Item) -> Option<Json> {
        match item {
            Item::None => None,
            Item::Value(value) => value_to_json(value),
            Item::Table(table) => Some(Json::Object(
                table.iter().filter_map(|(k, v)| Some((k.to_string(), item_to_json(v)?))).collect(),
            )),
            Item::ArrayOfTables(tables) => Some(Json::Array(
                tables
                    .iter()
                    .map(|t| item_to_json(&Item::Table(t.clone())))
                    .collect::<Option<Vec<_>>>()?,
            )),
        }
    }

    fn value_to_json(value: &Value) -> Option<Json> {
        Some(match value {
            Value::String(s) => Json::String(s.value().clone()),
            Value::Integer(i) => Json::from(*i.value()),
            Value::Float(f) => Json::Number(serde_json::Number::from_f64(*f.value())?),
            Value::Boolean(b) => Json::Bool(*b.value()),
            Value::Datetime(d) => Json::String(d.value().to_string()),
            Value::Array(a) => Json::Array(a.iter().map(value_to_json).collect::<Option<Vec<_>>>()?),
            Value::InlineTable(t) => Json::Object(
                t.iter().filter_map(|(k, v)| Some((k.to_string(), value_to_json(v)?))).collect(),
            ),
        })
    }

    fn to_value(json: &Json, path: &[PathSeg]) -> Result<Value> {
        Ok(match json {
            Json::Null => return Err(path_error(path, "TOML has no null value")),
            Json::Bool(b) => Value::from(*b),
            Json::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Value::from(i),
                (None, Some(f)) if n.is_f64() => Value::from(f),
                _ => return Err(path_error(path, format!("{n} does not fit in a TOML integer"))),
            },
            Json::String(s) => Value::from(s.as_str()),
            Json::Array(items) => {
                let mut array = Array::new();
                for (i, item) in items.iter().enumerate() {
                    array.push(to_value(item, &child_path(path, PathSeg::Index(i)))?);
                }
                Value::Array(array)
            }
            Json::Object(map) => {
                let mut table = InlineTable::new();
                for (key, item) in map {
                    table.insert(key, to_value(item, &child_path(path, PathSeg::Key(key.clone())))?);
                }
                Value::InlineTable(table)
            }
        })
    }

    /// A new item for `json` placed under a parent; `under_header` says the
    /// parent is a `[table]` (or the root), where objects become headers.
    fn new_item(json: &Json, under_header: bool, path: &[PathSeg]) -> Result<Item> {
        let Json::Object(map) = json else {
            return Ok(Item::Value(to_value(json, path)?));
        };
        if !under_header {
            return Ok(Item::Value(to_value(json, path)?));
        }
        let only_objects = !map.is_empty() && map.values().all(Json::is_object);
        let mut table = Table::new();
        table.set_implicit(only_objects);
        for (key, value) in map {
            let child = child_path(path, PathSeg::Key(key.clone()));
            // below a header that holds plain values, nested maps stay inline
            table.insert(key, new_item(value, only_objects, &child)?);
        }
        Ok(Item::Table(table))
    }

    fn child_path(path: &[PathSeg], seg: PathSeg) -> Vec<PathSeg> {
        let mut out = path.to_vec();
        out.push(seg);
        out
    }

    fn is_header(item: &Item) -> bool {
        matches!(item, Item::Table(t) if !t.is_dotted())
    }

    /// Set `value` at `path[depth..]` below `item`; returns whether anything changed.
    fn set(item: &mut Item, path: &[PathSeg], depth: usize, value: &Json) -> Result<bool> {
        let here = &path[..depth];
        let Some(seg) = path.get(depth) else {
            return update(item, value, here);
        };
        match seg {
            PathSeg::Key(key) => {
                let under_header = is_header(item);
                let table = item.as_table_like_mut().ok_or_else(|| path_error(here, "is not a table"))?;
                if table.get(key).is_none_or(Item::is_none) {
                    if depth + 1 == path.len() {
                        table.insert(key, new_item(value, under_header, &path[..=depth])?);
                        return Ok(true);
                    }
                    let PathSeg::Key(_) = path[depth + 1] else {
                        return Err(path_error(&path[..=depth], "does not exist (arrays are never created)"));
                    };
                    let parent = if under_header {
                        let mut t = Table::new();
                        t.set_implicit(true);
                        Item::Table(t)
                    } else {
                        Item::Value(Value::InlineTable(InlineTable::new()))
                    };
                    table.insert(key, parent);
                    let child = table.get_mut(key).ok_or_else(|| path_error(&path[..=depth], "could not be created"))?;
                    set(child, path, depth + 1, value)?;
                    return Ok(true);
                }
                let child = table.get_mut(key).ok_or_else(|| path_error(&path[..=depth], "could not be found"))?;
                set(child, path, depth + 1, value)
            }
            PathSeg::Index(index) => {
                let index = *index;
                let last = depth + 1 == path.len();
                match item {
                    Item::ArrayOfTables(tables) => {
                        if index == tables.len() && last {
                            let Item::Table(table) = new_item(value, true, path)? else {
                                return Err(path_error(path, "an element of an array of tables must be a table"));
                            };
                            tables.push(table);
                            return Ok(true);
                        }
                        with_table_element(tables, index, path, |element| set(element, path, depth + 1, value))
                    }
                    Item::Value(Value::Array(array)) => {
                        if index == array.len() && last {
                            array.push(to_value(value, path)?);
                            return Ok(true);
                        }
                        with_value_element(array, index, path, |element| set(element, path, depth + 1, value))
                    }
                    _ => Err(path_error(here, "is not an array")),
                }
            }
        }
    }

    /// Run `f` on element `index` of an array of tables, seen as an `Item`.
    fn with_table_element(
        tables: &mut ArrayOfTables,
        index: usize,
        path: &[PathSeg],
        f: impl FnOnce(&mut Item) -> Result<bool>,
    ) -> Result<bool> {
        let len = tables.len();
        let slot = tables
            .get_mut(index)
            .ok_or_else(|| path_error(path, format!("is past the end of the array ({len} elements)")))?;
        let mut item = Item::Table(std::mem::take(slot));
        let result = f(&mut item);
        match item {
            Item::Table(table) => *slot = table,
            _ => return Err(path_error(path, "an element of an array of tables must be a table")),
        }
        result
    }

    fn with_value_element(
        array: &mut Array,
        index: usize,
        path: &[PathSeg],
        f: impl FnOnce(&mut Item) -> Result<bool>,
    ) -> Result<bool> {
        let len = array.len();
        let slot = array
            .get_mut(index)
            .ok_or_else(|| path_error(path, format!("is past the end of the array ({len} elements)")))?;
        let mut item = Item::Value(std::mem::replace(slot, Value::from(false)));
        let result = f(&mut item);
        match item {
            Item::Value(value) => *slot = value,
            _ => return Err(path_error(path, "an array element must be a value")),
        }
        result
    }

    /// Make `item` hold `value`, touching as little as possible.
    fn update(item: &mut Item, value: &Json, path: &[PathSeg]) -> Result<bool> {
        if let Json::Object(map) = value {
            let under_header = is_header(item);
            if let Some(table) = item.as_table_like_mut() {
                let mut changed = false;
                let absent: Vec<String> =
                    table.iter().map(|(k, _)| k.to_string()).filter(|k| !map.contains_key(k)).collect();
                for key in absent {
                    table.remove(&key);
                    changed = true;
                }
                for (key, new_value) in map {
                    let child = child_path(path, PathSeg::Key(key.clone()));
                    match table.get_mut(key) {
                        Some(old) if !old.is_none() => changed |= update(old, new_value, &child)?,
                        _ => {
                            table.insert(key, new_item(new_value, under_header, &child)?);
                            changed = true;
                        }
                    }
                }
                return Ok(changed);
            }
        }
        if item_to_json(item).as_ref() == Some(value) {
            return Ok(false);
        }
        match item {
            Item::Value(old) => {
                // keep what sits around the value: the space after `=` and a trailing comment
                let mut new = to_value(value, path)?;
                *new.decor_mut() = old.decor().clone();
                *old = new;
            }
            Item::Table(_) | Item::ArrayOfTables(_) => {
                let position = item.as_table().and_then(Table::position);
                *item = new_item(value, true, path)?;
                if let (Item::Table(table), Some(position)) = (&mut *item, position) {
                    table.set_position(Some(position));
                }
            }
            Item::None => *item = new_item(value, true, path)?,
        }
        Ok(true)
    }

    fn remove(item: &mut Item, path: &[PathSeg]) -> bool {
        let Some((seg, rest)) = path.split_first() else {
            return false;
        };
        match (seg, rest.is_empty()) {
            (PathSeg::Key(key), true) => {
                item.as_table_like_mut().is_some_and(|t| t.remove(key).is_some())
            }
            (PathSeg::Key(key), false) => match item.as_table_like_mut().and_then(|t| t.get_mut(key)) {
                Some(child) => remove(child, rest),
                None => false,
            },
            (PathSeg::Index(index), last) => match item {
                Item::ArrayOfTables(tables) if *index < tables.len() => {
                    if last {
                        tables.remove(*index);
                        true
                    } else {
                        with_table_element(tables, *index, path, |element| Ok(remove(element, rest))).unwrap_or(false)
                    }
                }
                Item::Value(Value::Array(array)) if *index < array.len() => {
                    if last {
                        array.remove(*index);
                        true
                    } else {
                        with_value_element(array, *index, path, |element| Ok(remove(element, rest))).unwrap_or(false)
                    }
                }
                _ => false,
            },
        }
    }

    fn rename(item: &mut Item, path: &[PathSeg], new_key: &str) -> Result<bool> {
        let Some((PathSeg::Key(old_key), parents)) = path.split_last() else {
            return Err(path_error(path, "only an object key can be renamed"));
        };
        let mut parent = item;
        for (depth, seg) in parents.iter().enumerate() {
            parent = match seg {
                // not `Item::get_mut(&str)`: that inserts the key when missing
                PathSeg::Key(key) => parent.as_table_like_mut().and_then(|t| t.get_mut(key)),
                PathSeg::Index(index) => match parent {
                    Item::ArrayOfTables(_) | Item::Value(Value::Array(_)) => parent.get_mut(*index),
                    _ => None,
                },
            }
            .ok_or_else(|| path_error(&path[..=depth], "does not exist"))?;
        }
        if let Item::ArrayOfTables(_) = parent {
            return Err(path_error(parents, "is not a table"));
        }
        match parent {
            Item::Table(table) => rename_in_table(table, old_key, new_key, path),
            Item::Value(Value::InlineTable(table)) => rename_in_inline_table(table, old_key, new_key, path),
            _ => Err(path_error(parents, "is not a table")),
        }
    }

    fn renamed_key(old: &Key, new_key: &str) -> Key {
        Key::new(new_key).with_leaf_decor(old.leaf_decor().clone()).with_dotted_decor(old.dotted_decor().clone())
    }

    /// Rename by rebuilding the table in its own order, so the key keeps its
    /// place; a `[header]` table also keeps its document position.
    fn rename_in_table(table: &mut Table, old_key: &str, new_key: &str, path: &[PathSeg]) -> Result<bool> {
        check_rename(table.contains_key(old_key), table.contains_key(new_key), old_key, new_key, path)?;
        if old_key == new_key {
            return Ok(false);
        }
        let keys: Vec<String> = table.iter().map(|(k, _)| k.to_string()).collect();
        let mut entries = Vec::with_capacity(keys.len());
        for key in &keys {
            if let Some(entry) = table.remove_entry(key) {
                entries.push(entry);
            }
        }
        for (key, item) in entries {
            let key = if key.get() == old_key { renamed_key(&key, new_key) } else { key };
            table.insert_formatted(&key, item);
        }
        Ok(true)
    }

    fn rename_in_inline_table(
        table: &mut InlineTable,
        old_key: &str,
        new_key: &str,
        path: &[PathSeg],
    ) -> Result<bool> {
        check_rename(table.contains_key(old_key), table.contains_key(new_key), old_key, new_key, path)?;
        if old_key == new_key {
            return Ok(false);
        }
        let keys: Vec<String> = table.iter().map(|(k, _)| k.to_string()).collect();
        let mut entries = Vec::with_capacity(keys.len());
        for key in &keys {
            if let Some(entry) = table.remove_entry(key) {
                entries.push(entry);
            }
        }
        for (key, value) in entries {
            let key = if key.get() == old_key { renamed_key(&key, new_key) } else { key };
            table.insert_formatted(&key, value);
        }
        Ok(true)
    }

    fn check_rename(has_old: bool, has_new: bool, old_key: &str, new_key: &str, path: &[PathSeg]) -> Result<()> {
        if !has_old {
            return Err(path_error(path, "does not exist"));
        }
        if has_new && old_key != new_key {
            return Err(path_error(path, format!("cannot be renamed: \"{new_key}\" already exists")));
        }
        Ok(())
    }
}
