//! Format-level edits on a config document's text.
//!
//! JSON and JSONC go through one concrete syntax tree (`jsonc_parser::cst`,
//! plain JSON being a subset), TOML through `toml_edit::DocumentMut`. Both
//! keep every byte that an edit does not touch: comments, blank lines,
//! indentation, key order and keys Switchboard does not own. Block YAML is
//! edited line by line (`yaml`), as no Rust YAML library keeps comments.

use serde::{Deserialize, Serialize};

/// File format of a config source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Json,
    Jsonc,
    Toml,
    Yaml,
}

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
    /// when both are arrays, elements are updated the same way position by
    /// position (extra ones removed from the end, new ones appended), so an
    /// edited `args` list keeps its layout and comments; otherwise (scalars,
    /// type changes) the old value is replaced if it differs.
    /// Setting a value equal to the current one changes no byte.
    /// `Set` at an array index equal to its length appends.
    Set {
        path: Vec<PathSeg>,
        value: serde_json::Value,
    },
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
    /// The edit goes through a key the object has more than once. Readers
    /// take the last copy; which one the user means is theirs to say.
    #[error("{path} is in the file {} times (lines {}); clients use the last one. Delete the copies you do not want, then try again", lines.len().max(2), lines.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(", "))]
    Duplicate { path: String, lines: Vec<usize> },
}

pub type Result<T, E = DocError> = std::result::Result<T, E>;

/// Apply `edits` in order to `text` (a document in `format`), returning the
/// new text. Every byte outside the edited values is kept.
///
/// An empty (or whitespace/comment-only) document is treated as `{}` for
/// JSON(C) and as an empty TOML document. The result is re-parsed before it
/// is returned, so a caller never gets text it could not read back.
pub fn apply_edits(format: Format, text: &str, edits: &[DocEdit]) -> Result<String> {
    apply_edits_around(format, text, edits, None)
}

/// What reading a JSON(C) file for an edit already worked out in its one
/// pass over the text (`scan::locate_around`): the skeleton around `path`,
/// the container the edits will go under. An edit under it then costs no
/// second pass over a several-MB file.
#[derive(Debug, Clone)]
pub struct Around {
    pub path: Vec<PathSeg>,
    /// Of the text without its byte order mark; `None` where the scan could
    /// not take one.
    pub skeleton: Option<scan::Skeleton>,
}

/// `apply_edits` of a text read with `around` (the same text: the edit
/// uses the skeleton's offsets).
pub fn apply_edits_around(
    format: Format,
    text: &str,
    edits: &[DocEdit],
    around: Option<&Around>,
) -> Result<String> {
    // A UTF-8 byte order mark is not part of either grammar; keep it aside so
    // the file keeps it.
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    };
    let edited = match format {
        Format::Json | Format::Jsonc => jsonc::apply(body, edits, around)?,
        Format::Toml => toml::apply(body, edits)?,
        Format::Yaml => yaml::apply(body, edits)?,
    };
    Ok(match bom {
        "" => edited,
        bom => format!("{bom}{edited}"),
    })
}

/// `apply_edits` without the shortcut for large JSON(C) files (the edit
/// made on the document's skeleton): the whole document goes through the
/// syntax tree. Tests hold the two to the same result.
#[doc(hidden)]
pub fn apply_edits_whole_document(format: Format, text: &str, edits: &[DocEdit]) -> Result<String> {
    match format {
        Format::Json | Format::Jsonc => {
            let (bom, body) = match text.strip_prefix('\u{feff}') {
                Some(rest) => ("\u{feff}", rest),
                None => ("", text),
            };
            Ok(format!("{bom}{}", jsonc::apply_whole(body, edits)?))
        }
        _ => apply_edits(format, text, edits),
    }
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
                    && key
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
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
    DocError::Path {
        path: display_path(path),
        message: message.into(),
    }
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

pub mod scan;
mod yaml;

mod jsonc {
    //! Edits through jsonc-parser's CST. Its insert/append APIs pick up the
    //! surrounding indentation, newline kind and trailing-comma style, and
    //! `remove` takes the property's comma and line with it.
    //!
    //! One exception: the CST turns a single-line object into a multi-line
    //! one before appending to it, which would re-lay out a whole compact
    //! file. Appends to a single-line object are therefore spliced into the
    //! text (`,"key":value` after the last property) and the edit is re-run
    //! on the re-parsed text; re-running is safe because `Set` is idempotent.

    use jsonc_parser::cst::{
        CstArray, CstContainerNode, CstInputValue, CstLeafNode, CstNode, CstObject, CstRootNode,
        ObjectPropName,
    };
    use jsonc_parser::ParseOptions;
    use serde_json::Value;

    use super::{path_error, scan, Around, DocEdit, DocError, PathSeg, Result};

    /// Why an edit stopped before finishing.
    enum Step {
        Failed(DocError),
        /// The edit rewrote the text directly; parse this and run it again.
        Retry(String),
    }

    impl From<DocError> for Step {
        fn from(e: DocError) -> Self {
            Step::Failed(e)
        }
    }

    type StepResult<T> = std::result::Result<T, Step>;

    /// Bound on re-runs of one edit; each re-run adds at least one key, so
    /// this is only reached by a bug, and then an error beats a hang.
    const MAX_RETRIES: usize = 100_000;

    pub(super) fn apply(text: &str, edits: &[DocEdit], around: Option<&Around>) -> Result<String> {
        match in_skeleton(text, edits, around) {
            Some(edited) => Ok(edited),
            None => apply_whole(text, edits),
        }
    }

    /// The edits made on the document's skeleton (see `scan::skeleton`): a
    /// several-MB `~/.claude.json` is edited at the cost of its few KB of
    /// servers. The syntax tree takes its layout choices (indentation, line
    /// ends, trailing commas) from the edited object, its ancestors and the
    /// lines they start on, all of which the skeleton keeps as they are, so
    /// the edited object comes out as it would from the whole document; it
    /// is then put back between the untouched bytes before and after it.
    /// `None` where that does not hold or cannot be shown (mixed line ends,
    /// an error to report with the whole document's lines, anything the scan
    /// is unsure of): the caller edits the whole document. The skeleton is
    /// `around`'s when every edit is inside the container it keeps.
    fn in_skeleton(text: &str, edits: &[DocEdit], around: Option<&Around>) -> Option<String> {
        if !uniform_line_ends(text) {
            return None;
        }
        let mut parents = edits.iter().map(|e| {
            let path = edit_path(e);
            Some(&path[..path.len().checked_sub(1)?])
        });
        let mut common = parents.next()??;
        for p in parents {
            let p = p?;
            let same = common.iter().zip(p).take_while(|(a, b)| a == b).count();
            common = &common[..same];
        }
        let taken = around.and_then(|a| {
            let sk = a.skeleton.as_ref()?;
            common.starts_with(&a.path[..sk.depth]).then_some(sk)
        });
        let computed;
        let skeleton = match taken {
            Some(sk) => sk,
            None => {
                computed = scan::skeleton(text, true, common).ok()?;
                &computed
            }
        };
        if text.contains('\n') && !skeleton.text.contains('\n') {
            return None;
        }
        let edited = apply_whole(&skeleton.text, edits).ok()?;
        let head = &skeleton.text[..skeleton.kept_in_skeleton.start];
        let tail = &skeleton.text[skeleton.kept_in_skeleton.end..];
        if edited.len() < head.len() + tail.len()
            || !edited.starts_with(head)
            || !edited.ends_with(tail)
        {
            return None;
        }
        let kept = &edited[head.len()..edited.len() - tail.len()];
        Some(
            [
                &text[..skeleton.kept.start],
                kept,
                &text[skeleton.kept.end..],
            ]
            .concat(),
        )
    }

    /// Every line end is `\n`, or every one is `\r\n` (the syntax tree writes
    /// new lines with the first kind it finds, which could otherwise be
    /// another in the skeleton than in the whole document).
    fn uniform_line_ends(text: &str) -> bool {
        let crs = memchr::memchr_iter(b'\r', text.as_bytes()).count();
        crs == 0 || {
            let crlfs = memchr::memmem::find_iter(text.as_bytes(), b"\r\n").count();
            crs == crlfs && crlfs == memchr::memchr_iter(b'\n', text.as_bytes()).count()
        }
    }

    /// The edits applied to the whole document's syntax tree.
    pub(super) fn apply_whole(text: &str, edits: &[DocEdit]) -> Result<String> {
        let options = ParseOptions::default();
        // Parsing a large file (a 1 MB ~/.claude.json) is most of an edit's
        // cost: the first parse both checks the file and serves the first edit.
        let mut parsed =
            Some(CstRootNode::parse(text, &options).map_err(|e| DocError::Parse(e.to_string()))?);
        let mut current = text.to_string();
        for edit in edits {
            let mut retries = 0;
            loop {
                // The root must outlive every node taken from it (the CST
                // holds weak parent links), so it stays bound here.
                let root = match parsed.take() {
                    Some(root) => root,
                    None => CstRootNode::parse(&current, &options)
                        .map_err(|e| unreadable(edit, &e.to_string()))?,
                };
                let result = match edit {
                    DocEdit::Set { path, value } => set(&root, path, value),
                    DocEdit::Remove { path } => remove(&root, path).map_err(Step::from),
                    DocEdit::RenameKey { path, new_key } => {
                        rename(&root, path, new_key).map_err(Step::from)
                    }
                };
                match result {
                    Ok(()) => {
                        current = root.to_string();
                        break;
                    }
                    Err(Step::Failed(e)) => return Err(e),
                    Err(Step::Retry(spliced)) => {
                        retries += 1;
                        if retries > MAX_RETRIES {
                            return Err(path_error(edit_path(edit), "the edit did not converge"));
                        }
                        current = spliced;
                    }
                }
            }
        }
        if current == text {
            return Ok(current);
        }
        if let Err(e) = CstRootNode::parse(&current, &options) {
            let edit = edits
                .first()
                .expect("a changed text means there was an edit");
            return Err(unreadable(edit, &e.to_string()));
        }
        Ok(current)
    }

    fn unreadable(edit: &DocEdit, error: &str) -> DocError {
        path_error(
            edit_path(edit),
            format!("the edit would leave the file unreadable ({error})"),
        )
    }

    fn edit_path(edit: &DocEdit) -> &[PathSeg] {
        match edit {
            DocEdit::Set { path, .. }
            | DocEdit::Remove { path }
            | DocEdit::RenameKey { path, .. } => path,
        }
    }

    /// The plain value a node stands for (comments dropped), or `None` for
    /// something that is not a value.
    fn node_value(node: &CstNode) -> Option<Value> {
        jsonc_parser::parse_to_serde_value::<Option<Value>>(
            &node.to_string(),
            &ParseOptions::default(),
        )
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
            Value::Object(map) => {
                CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), to_input(v))).collect())
            }
        }
    }

    /// Add `key: value` at the end of `object`, in the object's own layout.
    fn append_prop(
        root: &CstRootNode,
        object: &CstObject,
        key: &str,
        value: &Value,
    ) -> StepResult<()> {
        let children = object.children();
        let single_line = !children.iter().any(CstNode::is_newline);
        let props = object.properties();
        // an empty `{}` only stays on one line in a file that is all one line
        let inline = single_line && (!props.is_empty() || !root.to_string().contains('\n'));
        if !inline {
            object.append(key, to_input(value));
            return Ok(());
        }
        Err(Step::Retry(splice_into_single_line(
            root, object, key, value,
        )?))
    }

    /// The document text with `key: value` written into single-line `object`.
    fn splice_into_single_line(
        root: &CstRootNode,
        object: &CstObject,
        key: &str,
        value: &Value,
    ) -> Result<String> {
        let failed = || path_error(&[], "cannot find the object to add to");
        let children = object.children();
        let close = children
            .last()
            .and_then(CstNode::as_token)
            .filter(|t| t.value() == '}')
            .ok_or_else(failed)?;
        let rendered = root.to_string();
        // find the object in the text by briefly swapping its `}` for a marker
        let marker = ('\u{E000}'..='\u{F8FF}')
            .find(|c| !rendered.contains(*c))
            .ok_or_else(failed)?;
        close.set_value(marker);
        let marked = root.to_string();
        close.set_value('}');
        let close_at = marked.find(marker).ok_or_else(failed)?;

        let props = object.properties();
        let after_last = props.last().map(|p| p.child_index() + 1).unwrap_or(1);
        let tail = children
            .get(after_last..children.len() - 1)
            .unwrap_or_default();
        let tail_len: usize = tail.iter().map(|c| c.to_string().len()).sum();
        let tail_start = close_at.checked_sub(tail_len).ok_or_else(failed)?;

        let spaced = is_spaced(object);
        let sep = if spaced { " " } else { "" };
        let prop = format!("{}:{sep}{}", json_string(key), inline_json(value, spaced));
        let (at, insert) = if props.is_empty() {
            (tail_start, prop)
        } else if let Some(comma) = tail.iter().position(CstNode::is_comma) {
            // `{"a":1,}`: the file ends objects with a comma; so does the new one
            let upto: usize = tail[..=comma].iter().map(|c| c.to_string().len()).sum();
            (tail_start + upto, format!("{sep}{prop},"))
        } else {
            (tail_start, format!(",{sep}{prop}"))
        };
        let mut out = rendered;
        if !out.is_char_boundary(at) {
            return Err(failed());
        }
        out.insert_str(at, &insert);
        Ok(out)
    }

    /// Whether a single-line object puts spaces around its parts
    /// (`{ "a": 1, "b": 2 }`) or none (`{"a":1,"b":2}`).
    fn is_spaced(object: &CstObject) -> bool {
        object.children().iter().any(CstNode::is_whitespace)
            || object
                .properties()
                .iter()
                .any(|p| p.children().iter().any(CstNode::is_whitespace))
    }

    fn json_string(s: &str) -> String {
        serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
    }

    fn inline_json(value: &Value, spaced: bool) -> String {
        let (comma, colon) = if spaced { (", ", ": ") } else { (",", ":") };
        match value {
            Value::Array(items) => {
                format!(
                    "[{}]",
                    items
                        .iter()
                        .map(|v| inline_json(v, spaced))
                        .collect::<Vec<_>>()
                        .join(comma)
                )
            }
            Value::Object(map) if map.is_empty() => "{}".to_string(),
            Value::Object(map) => {
                let body = map
                    .iter()
                    .map(|(k, v)| format!("{}{colon}{}", json_string(k), inline_json(v, spaced)))
                    .collect::<Vec<_>>()
                    .join(comma);
                if spaced {
                    format!("{{ {body} }}")
                } else {
                    format!("{{{body}}}")
                }
            }
            scalar => serde_json::to_string(scalar).unwrap_or_else(|_| "null".to_string()),
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
    fn walk(root: &CstRootNode, path: &[PathSeg], create: bool) -> StepResult<Option<CstNode>> {
        let Some(mut node) = root_value(root, create) else {
            return Ok(None);
        };
        for (depth, seg) in path.iter().enumerate() {
            let here = &path[..depth];
            node = match seg {
                PathSeg::Key(key) => {
                    let Some(object) = node.as_object() else {
                        if create {
                            return Err(path_error(here, "is not an object").into());
                        }
                        return Ok(None);
                    };
                    unique_key(root, &object, &path[..=depth])?;
                    match object.get(key).and_then(|prop| prop.value()) {
                        Some(value) => value,
                        None if create => {
                            match object.get(key) {
                                // `"key":` with no value only survives in broken input
                                Some(prop) => prop.set_value(CstInputValue::Object(Vec::new())),
                                None => append_prop(
                                    root,
                                    &object,
                                    key,
                                    &Value::Object(Default::default()),
                                )?,
                            }
                            match object.get(key).and_then(|prop| prop.value()) {
                                Some(value) => value,
                                None => {
                                    return Err(
                                        path_error(&path[..=depth], "could not be created").into()
                                    )
                                }
                            }
                        }
                        None => return Ok(None),
                    }
                }
                PathSeg::Index(index) => {
                    let Some(array) = node.as_array() else {
                        if create {
                            return Err(path_error(here, "is not an array").into());
                        }
                        return Ok(None);
                    };
                    match array.elements().get(*index) {
                        Some(element) => element.clone(),
                        None if create => {
                            return Err(path_error(
                                &path[..=depth],
                                "is past the end of the array",
                            )
                            .into());
                        }
                        None => return Ok(None),
                    }
                }
            };
        }
        Ok(Some(node))
    }

    fn set(root: &CstRootNode, path: &[PathSeg], value: &Value) -> StepResult<()> {
        let Some((last, parents)) = path.split_last() else {
            match root.value() {
                Some(node) => update(root, node, value)?,
                None => root.set_value(to_input(value)),
            }
            return Ok(());
        };
        let container = walk(root, parents, true)?
            .ok_or_else(|| path_error(parents, "could not be created"))?;
        match last {
            PathSeg::Key(key) => {
                let object = container
                    .as_object()
                    .ok_or_else(|| path_error(parents, "is not an object"))?;
                unique_key(root, &object, path)?;
                match object.get(key) {
                    Some(prop) => match prop.value() {
                        Some(node) => update(root, node, value)?,
                        None => prop.set_value(to_input(value)),
                    },
                    None => append_prop(root, &object, key, value)?,
                }
            }
            PathSeg::Index(index) => {
                let array = container
                    .as_array()
                    .ok_or_else(|| path_error(parents, "is not an array"))?;
                let elements = array.elements();
                match elements.get(*index) {
                    Some(node) => update(root, node.clone(), value)?,
                    None if *index == elements.len() => {
                        array.append(to_input(value));
                    }
                    None => {
                        let message =
                            format!("is past the end of the array ({} elements)", elements.len());
                        return Err(path_error(path, message).into());
                    }
                }
            }
        }
        Ok(())
    }

    /// Refuse a path whose last key `object` has more than once: an edit
    /// would change the first copy while every reader uses the last.
    fn unique_key(root: &CstRootNode, object: &CstObject, path: &[PathSeg]) -> Result<()> {
        let Some(PathSeg::Key(key)) = path.last() else {
            return Ok(());
        };
        let copies = object
            .properties()
            .iter()
            .filter(|p| p.decoded_name().as_deref() == Some(key.as_str()))
            .count();
        if copies < 2 {
            return Ok(());
        }
        Err(DocError::Duplicate {
            path: super::display_path(path),
            lines: key_lines(&root.to_string(), path),
        })
    }

    /// Lines of every copy of the last key of `path` (the keys before it are
    /// unique, or the walk would have stopped there).
    fn key_lines(text: &str, path: &[PathSeg]) -> Vec<usize> {
        let Ok(parsed) =
            jsonc_parser::parse_to_ast(text, &Default::default(), &ParseOptions::default())
        else {
            return vec![];
        };
        let Some(mut value) = parsed.value else {
            return vec![];
        };
        let Some((PathSeg::Key(last), parents)) = path.split_last() else {
            return vec![];
        };
        for seg in parents {
            let next = match (seg, &value) {
                (PathSeg::Key(k), jsonc_parser::ast::Value::Object(o)) => o
                    .properties
                    .iter()
                    .rev()
                    .find(|p| p.name.as_str() == k)
                    .map(|p| p.value.clone()),
                (PathSeg::Index(i), jsonc_parser::ast::Value::Array(a)) => {
                    a.elements.get(*i).cloned()
                }
                _ => None,
            };
            let Some(next) = next else { return vec![] };
            value = next;
        }
        let jsonc_parser::ast::Value::Object(o) = &value else {
            return vec![];
        };
        o.properties
            .iter()
            .filter(|p| p.name.as_str() == last)
            .map(|p| super::line_column(text, p.range.start).0)
            .collect()
    }

    /// Make `node` hold `value`, touching as little as possible.
    fn update(root: &CstRootNode, node: CstNode, value: &Value) -> StepResult<()> {
        if let (Some(object), Value::Object(map)) = (node.as_object(), value) {
            return update_object(root, &object, map);
        }
        if let (Some(array), Value::Array(items)) = (node.as_array(), value) {
            return update_array(root, &array, items);
        }
        if node_value(&node).as_ref() != Some(value) {
            replace(node, to_input(value));
        }
        Ok(())
    }

    fn update_object(
        root: &CstRootNode,
        object: &CstObject,
        map: &serde_json::Map<String, Value>,
    ) -> StepResult<()> {
        for prop in object.properties() {
            // a name that cannot be decoded is not ours to judge; leave it
            let Some(name) = prop.decoded_name() else {
                continue;
            };
            match map.get(&name) {
                None => prop.remove(),
                Some(new_value) => match prop.value() {
                    Some(old) => update(root, old, new_value)?,
                    None => prop.set_value(to_input(new_value)),
                },
            }
        }
        for (key, new_value) in map {
            if object.get(key).is_none() {
                append_prop(root, object, key, new_value)?;
            }
        }
        Ok(())
    }

    fn update_array(root: &CstRootNode, array: &CstArray, items: &[Value]) -> StepResult<()> {
        let elements = array.elements();
        for (element, item) in elements.iter().zip(items) {
            update(root, element.clone(), item)?;
        }
        // from the end, so each removal takes the comma before it
        for element in elements.iter().skip(items.len()).rev() {
            element.clone().remove();
        }
        for item in items.iter().skip(elements.len()) {
            array.append(to_input(item));
        }
        Ok(())
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

    /// Remove the value at `path`. A key the object has twice is refused
    /// like any edit: removing every copy would also take the one the user
    /// keeps on purpose (disabling by parking, for one, keeps only the last).
    fn remove(root: &CstRootNode, path: &[PathSeg]) -> Result<()> {
        let Some((last, parents)) = path.split_last() else {
            if let Some(value) = root.value() {
                value.remove();
            }
            return Ok(());
        };
        let container = match walk(root, parents, false) {
            Ok(Some(container)) => container,
            Err(Step::Failed(e @ DocError::Duplicate { .. })) => return Err(e),
            _ => return Ok(()),
        };
        match last {
            PathSeg::Key(key) => {
                if let Some(object) = container.as_object() {
                    unique_key(root, &object, path)?;
                    if let Some(prop) = object.get(key) {
                        prop.remove();
                    }
                }
            }
            PathSeg::Index(index) => {
                if let Some(element) = container
                    .as_array()
                    .and_then(|a| a.elements().get(*index).cloned())
                {
                    element.remove();
                }
            }
        }
        Ok(())
    }

    fn rename(root: &CstRootNode, path: &[PathSeg], new_key: &str) -> Result<()> {
        let Some((PathSeg::Key(old_key), parents)) = path.split_last() else {
            return Err(path_error(path, "only an object key can be renamed"));
        };
        let container = match walk(root, parents, false) {
            Ok(Some(container)) => container,
            Ok(None) => return Err(path_error(path, "does not exist")),
            Err(Step::Failed(e)) => return Err(e),
            Err(Step::Retry(_)) => return Err(path_error(path, "does not exist")),
        };
        let object = container
            .as_object()
            .ok_or_else(|| path_error(parents, "is not an object"))?;
        unique_key(root, &object, path)?;
        let prop = object
            .get(old_key)
            .ok_or_else(|| path_error(path, "does not exist"))?;
        if old_key == new_key {
            return Ok(());
        }
        if object.get(new_key).is_some() {
            return Err(path_error(
                path,
                format!("cannot be renamed: \"{new_key}\" already exists"),
            ));
        }
        let quoted = json_string(new_key);
        match prop.name() {
            Some(ObjectPropName::String(name)) => name.set_raw_value(quoted),
            Some(ObjectPropName::Word(name)) => {
                // keep an unquoted (JSON5-style) key unquoted when it can be
                let bare = new_key
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
                    && new_key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
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
                DocEdit::Set { path, value } => {
                    if path.is_empty() && !value.is_object() {
                        return Err(path_error(path, "a TOML document can only be a table"));
                    }
                    set(doc.as_item_mut(), path, 0, value)?
                }
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
                format!(
                    "the edit would leave the file unreadable ({})",
                    parse_error(&out, &e)
                ),
            ));
        }
        Ok(out)
    }

    fn edit_path(edit: &DocEdit) -> &[PathSeg] {
        match edit {
            DocEdit::Set { path, .. }
            | DocEdit::Remove { path }
            | DocEdit::RenameKey { path, .. } => path,
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
                table
                    .iter()
                    .filter_map(|(k, v)| Some((k.to_string(), item_to_json(v)?)))
                    .collect(),
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
            Value::Array(a) => {
                Json::Array(a.iter().map(value_to_json).collect::<Option<Vec<_>>>()?)
            }
            Value::InlineTable(t) => Json::Object(
                t.iter()
                    .filter_map(|(k, v)| Some((k.to_string(), value_to_json(v)?)))
                    .collect(),
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
                _ => {
                    return Err(path_error(
                        path,
                        format!("{n} does not fit in a TOML integer"),
                    ))
                }
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
                    table.insert(
                        key,
                        to_value(item, &child_path(path, PathSeg::Key(key.clone())))?,
                    );
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

    /// Insert a new key. In an inline table the space before `}` belongs to
    /// the last value, so it moves to the new last value: `{ A = "1", B = "2" }`.
    fn insert_into(parent: &mut Item, key: &str, new: Item) {
        match parent {
            Item::Value(Value::InlineTable(table)) => {
                let Ok(mut value) = new.into_value() else {
                    return;
                };
                if let Some((_, last)) = table.iter_mut().last() {
                    if let Some(suffix) = last.decor().suffix().cloned() {
                        last.decor_mut().set_suffix("");
                        value.decor_mut().set_suffix(suffix);
                    }
                }
                // a key already present as `Item::None` would keep its old slot
                table.remove(key);
                table.insert(key, value);
            }
            other => {
                if let Some(table) = other.as_table_like_mut() {
                    table.insert(key, new);
                }
            }
        }
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
                let table = item
                    .as_table_like()
                    .ok_or_else(|| path_error(here, "is not a table"))?;
                if table.get(key).is_none_or(Item::is_none) {
                    if depth + 1 == path.len() {
                        insert_into(item, key, new_item(value, under_header, &path[..=depth])?);
                        return Ok(true);
                    }
                    let PathSeg::Key(_) = path[depth + 1] else {
                        return Err(path_error(
                            &path[..=depth],
                            "does not exist (arrays are never created)",
                        ));
                    };
                    let parent = if under_header {
                        let mut t = Table::new();
                        t.set_implicit(true);
                        Item::Table(t)
                    } else {
                        Item::Value(Value::InlineTable(InlineTable::new()))
                    };
                    insert_into(item, key, parent);
                    let child = item
                        .as_table_like_mut()
                        .and_then(|t| t.get_mut(key))
                        .ok_or_else(|| path_error(&path[..=depth], "could not be created"))?;
                    set(child, path, depth + 1, value)?;
                    return Ok(true);
                }
                let child = item
                    .as_table_like_mut()
                    .and_then(|t| t.get_mut(key))
                    .ok_or_else(|| path_error(&path[..=depth], "could not be found"))?;
                set(child, path, depth + 1, value)
            }
            PathSeg::Index(index) => {
                let index = *index;
                let last = depth + 1 == path.len();
                match item {
                    Item::ArrayOfTables(tables) => {
                        if index == tables.len() && last {
                            let Item::Table(table) = new_item(value, true, path)? else {
                                return Err(path_error(
                                    path,
                                    "an element of an array of tables must be a table",
                                ));
                            };
                            tables.push(table);
                            return Ok(true);
                        }
                        with_table_element(tables, index, path, |element| {
                            set(element, path, depth + 1, value)
                        })
                    }
                    Item::Value(Value::Array(array)) => {
                        if index == array.len() && last {
                            push_like_last(array, to_value(value, path)?);
                            return Ok(true);
                        }
                        with_value_element(array, index, path, |element| {
                            set(element, path, depth + 1, value)
                        })
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
        let slot = tables.get_mut(index).ok_or_else(|| {
            path_error(
                path,
                format!("is past the end of the array ({len} elements)"),
            )
        })?;
        let mut item = Item::Table(std::mem::take(slot));
        let result = f(&mut item);
        match item {
            Item::Table(table) => *slot = table,
            _ => {
                return Err(path_error(
                    path,
                    "an element of an array of tables must be a table",
                ))
            }
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
        let slot = array.get_mut(index).ok_or_else(|| {
            path_error(
                path,
                format!("is past the end of the array ({len} elements)"),
            )
        })?;
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
                let absent: Vec<String> = table
                    .iter()
                    .map(|(k, _)| k.to_string())
                    .filter(|k| !map.contains_key(k))
                    .collect();
                for key in absent {
                    table.remove(&key);
                    changed = true;
                }
                let mut missing = Vec::new();
                for (key, new_value) in map {
                    let child = child_path(path, PathSeg::Key(key.clone()));
                    match table.get_mut(key) {
                        Some(old) if !old.is_none() => changed |= update(old, new_value, &child)?,
                        _ => missing.push((key, new_value, child)),
                    }
                }
                // new keys go last, in the new value's order, as the existing ones kept theirs
                for (key, new_value, child) in missing {
                    insert_into(item, key, new_item(new_value, under_header, &child)?);
                    changed = true;
                }
                return Ok(changed);
            }
        }
        if let Json::Array(items) = value {
            match item {
                Item::Value(Value::Array(array)) => return update_array(array, items, path),
                Item::ArrayOfTables(tables) if items.iter().all(Json::is_object) => {
                    return update_tables(tables, items, path)
                }
                _ => {}
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

    fn update_array(array: &mut Array, items: &[Json], path: &[PathSeg]) -> Result<bool> {
        let mut changed = false;
        let old_len = array.len();
        for (i, item) in items.iter().enumerate().take(old_len) {
            let child = child_path(path, PathSeg::Index(i));
            changed |=
                with_value_element(array, i, &child, |element| update(element, item, &child))?;
        }
        for i in (items.len()..old_len).rev() {
            array.remove(i);
            changed = true;
        }
        for (i, item) in items.iter().enumerate().skip(old_len) {
            push_like_last(array, to_value(item, &child_path(path, PathSeg::Index(i)))?);
            changed = true;
        }
        Ok(changed)
    }

    /// Append keeping a multi-line array multi-line: the new element gets the
    /// same leading whitespace as the last one.
    fn push_like_last(array: &mut Array, value: Value) {
        let prefix = match array.len() {
            0 => None,
            1 => array
                .get(0)
                .and_then(|v| v.decor().prefix())
                .and_then(|p| p.as_str())
                .filter(|p| p.contains('\n'))
                .map(str::to_string),
            n => array
                .get(n - 1)
                .and_then(|v| v.decor().prefix())
                .and_then(|p| p.as_str())
                .map(str::to_string),
        };
        match prefix {
            Some(prefix) => array.push_formatted(value.decorated(prefix, "")),
            None => array.push(value),
        }
    }

    fn update_tables(tables: &mut ArrayOfTables, items: &[Json], path: &[PathSeg]) -> Result<bool> {
        let mut changed = false;
        let old_len = tables.len();
        for (i, item) in items.iter().enumerate().take(old_len) {
            let child = child_path(path, PathSeg::Index(i));
            changed |=
                with_table_element(tables, i, &child, |element| update(element, item, &child))?;
        }
        for i in (items.len()..old_len).rev() {
            tables.remove(i);
            changed = true;
        }
        for (i, item) in items.iter().enumerate().skip(old_len) {
            if let Item::Table(table) = new_item(item, true, &child_path(path, PathSeg::Index(i)))?
            {
                tables.push(table);
                changed = true;
            }
        }
        Ok(changed)
    }

    fn remove(item: &mut Item, path: &[PathSeg]) -> bool {
        let Some((seg, rest)) = path.split_first() else {
            return false;
        };
        match (seg, rest.is_empty()) {
            (PathSeg::Key(key), true) => item
                .as_table_like_mut()
                .is_some_and(|t| t.remove(key).is_some()),
            (PathSeg::Key(key), false) => {
                match item.as_table_like_mut().and_then(|t| t.get_mut(key)) {
                    Some(child) => remove(child, rest),
                    None => false,
                }
            }
            (PathSeg::Index(index), last) => match item {
                Item::ArrayOfTables(tables) if *index < tables.len() => {
                    if last {
                        tables.remove(*index);
                        true
                    } else {
                        with_table_element(tables, *index, path, |element| {
                            Ok(remove(element, rest))
                        })
                        .unwrap_or(false)
                    }
                }
                Item::Value(Value::Array(array)) if *index < array.len() => {
                    if last {
                        array.remove(*index);
                        true
                    } else {
                        with_value_element(array, *index, path, |element| Ok(remove(element, rest)))
                            .unwrap_or(false)
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
            Item::Value(Value::InlineTable(table)) => {
                rename_in_inline_table(table, old_key, new_key, path)
            }
            _ => Err(path_error(parents, "is not a table")),
        }
    }

    fn renamed_key(old: &Key, new_key: &str) -> Key {
        Key::new(new_key)
            .with_leaf_decor(old.leaf_decor().clone())
            .with_dotted_decor(old.dotted_decor().clone())
    }

    /// Rename by rebuilding the table in its own order, so the key keeps its
    /// place; a `[header]` table also keeps its document position.
    fn rename_in_table(
        table: &mut Table,
        old_key: &str,
        new_key: &str,
        path: &[PathSeg],
    ) -> Result<bool> {
        check_rename(
            table.contains_key(old_key),
            table.contains_key(new_key),
            old_key,
            new_key,
            path,
        )?;
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
            let key = if key.get() == old_key {
                renamed_key(&key, new_key)
            } else {
                key
            };
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
        check_rename(
            table.contains_key(old_key),
            table.contains_key(new_key),
            old_key,
            new_key,
            path,
        )?;
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
            let key = if key.get() == old_key {
                renamed_key(&key, new_key)
            } else {
                key
            };
            table.insert_formatted(&key, value);
        }
        Ok(true)
    }

    fn check_rename(
        has_old: bool,
        has_new: bool,
        old_key: &str,
        new_key: &str,
        path: &[PathSeg],
    ) -> Result<()> {
        if !has_old {
            return Err(path_error(path, "does not exist"));
        }
        if has_new && old_key != new_key {
            return Err(path_error(
                path,
                format!("cannot be renamed: \"{new_key}\" already exists"),
            ));
        }
        Ok(())
    }
}
