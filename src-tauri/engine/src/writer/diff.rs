//! Readable line diffs of a file before and after a write, as the History
//! view and `switchboard history` show them: the changed lines with a few
//! lines of context, long unchanged stretches folded, secret values masked.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::redact::Redactor;
use crate::sources::read::parse;
use crate::writer::atomic::ContentHash;
use crate::writer::doc::{scan, Format};

/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;
/// Lines shown per file at most; the rest is summed up in one line.
const MAX_SHOWN: usize = 400;
/// Largest changed region (lines before × lines after) diffed line by line;
/// beyond it the region is shown as all removed, then all added.
const MAX_TABLE: usize = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum LineKind {
    Same,
    Removed,
    Added,
    /// Unchanged lines left out; `text` says how many.
    Skipped,
}

/// One line of a diff. `old`/`new` are 1-based line numbers before/after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    pub kind: LineKind,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub old: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub new: Option<usize>,
}

impl DiffLine {
    fn skipped(n: usize) -> DiffLine {
        let text = if n == 1 {
            "1 unchanged line".to_string()
        } else {
            format!("{n} unchanged lines")
        };
        DiffLine {
            kind: LineKind::Skipped,
            text,
            old: None,
            new: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Same(usize, usize),
    Removed(usize),
    Added(usize),
}

/// The diff of `before` → `after` (either may be empty: a created or deleted
/// file), with every secret value found in either replaced by `•••`.
pub fn file_diff(path: &Path, before: Option<&str>, after: Option<&str>) -> Vec<DiffLine> {
    file_diff_hashed(
        path,
        before.map(|t| (t.as_bytes(), None)),
        after.map(|t| (t.as_bytes(), None)),
    )
}

/// `file_diff` of file contents as bytes whose hashes may be known: the
/// secret values of a large content are remembered by its hash, as the
/// content after one edit is the content before the next. Only the lines
/// shown are read as text (bytes that are not UTF-8 show as `�`).
pub fn file_diff_hashed(
    path: &Path,
    before: Option<(&[u8], Option<ContentHash>)>,
    after: Option<(&[u8], Option<ContentHash>)>,
) -> Vec<DiffLine> {
    let lines = unmasked_diff(before.map(|b| b.0), after.map(|a| a.0));
    masked(path, lines, before, after)
}

/// `file_diff_hashed` before the secret values are masked: a large write
/// works this out while the secret values are still being found.
pub(crate) fn unmasked_diff(before: Option<&[u8]>, after: Option<&[u8]>) -> Vec<DiffLine> {
    line_diff_bytes(before.unwrap_or(b""), after.unwrap_or(b""))
}

/// `lines` of the diff of `before` and `after` with their secret values masked.
pub(crate) fn masked(
    path: &Path,
    mut lines: Vec<DiffLine>,
    before: Option<(&[u8], Option<ContentHash>)>,
    after: Option<(&[u8], Option<ContentHash>)>,
) -> Vec<DiffLine> {
    let redactor = Redactor::default();
    let mut secrets = vec![];
    for (bytes, hash) in [before, after].into_iter().flatten() {
        secrets.extend(remembered_secret_values(path, bytes, hash));
    }
    redactor.set(secrets);
    if !redactor.is_empty() {
        for l in &mut lines {
            l.text = redactor.apply(&l.text);
        }
    }
    lines
}

/// Unchanged lines kept on each side of the changes when the rest is only
/// counted: enough for the context and for a fold of at least two lines.
const KEEP: usize = CONTEXT + 2;

/// A line diff: changed lines with `CONTEXT` lines around them.
pub fn line_diff(before: &str, after: &str) -> Vec<DiffLine> {
    line_diff_bytes(before.as_bytes(), after.as_bytes())
}

/// `line_diff` of bytes.
///
/// The lines of the common head and tail beyond `KEEP` lines of the changes
/// are not split, read as text or compared one by one, only counted, so the
/// diff of one edit in a several-MB file costs a pass of byte comparisons.
fn line_diff_bytes(a: &[u8], b: &[u8]) -> Vec<DiffLine> {
    let head = common_prefix(a, b);
    if head == a.len() && head == b.len() {
        return vec![];
    }
    let line_start = memchr::memrchr(b'\n', &a[..head]).map_or(0, |i| i + 1);
    // The line diff compares lines as `str::lines` splits them, so a line
    // that differs only in the `\r` of its `\r\n` counts as unchanged: the
    // unchanged lines at the start may reach past the first changed byte.
    // Where they end, in `a` and in `b`:
    let (mut same_a, mut same_b) = (line_start, line_start);
    for (x, y) in a[line_start..]
        .split_inclusive(|&c| c == b'\n')
        .zip(b[line_start..].split_inclusive(|&c| c == b'\n'))
    {
        if line_of(x) != line_of(y) {
            break;
        }
        same_a += x.len();
        same_b += y.len();
    }
    // The common end is looked for after them, as the line diff does.
    let tail = common_suffix(&a[same_a..], &b[same_b..]);
    // back from the first changed line, `KEEP` whole lines
    let mut cut = line_start;
    for _ in 0..KEEP {
        if cut == 0 {
            break;
        }
        cut = memchr::memrchr(b'\n', &a[..cut - 1]).map_or(0, |i| i + 1);
    }
    // forward from the end of the last changed line, `KEEP` whole lines
    let mut end = a.len() - tail;
    for _ in 0..=KEEP {
        match memchr::memchr(b'\n', &a[end..]) {
            Some(i) if end + i < a.len() => end += i + 1,
            _ => {
                end = a.len();
                break;
            }
        }
    }
    let dropped_head = memchr::memchr_iter(b'\n', &a[..cut]).count();
    let dropped_tail = line_count(&a[end..]);
    let end_b = b.len() - (a.len() - end);
    let mut out = lines_of_diff(
        &String::from_utf8_lossy(&a[cut..end]),
        &String::from_utf8_lossy(&b[cut..end_b]),
    );
    for l in &mut out {
        l.old = l.old.map(|n| n + dropped_head);
        l.new = l.new.map(|n| n + dropped_head);
    }
    if dropped_head > 0 {
        if let Some(first) = out.first_mut().filter(|l| l.kind == LineKind::Skipped) {
            *first = DiffLine::skipped(skipped_count(first) + dropped_head);
        }
    }
    if dropped_tail > 0 {
        if let Some(last) = out.last_mut().filter(|l| l.kind == LineKind::Skipped) {
            *last = DiffLine::skipped(skipped_count(last) + dropped_tail);
        }
    }
    cap_shown(&mut out);
    out
}

/// One piece of `split_inclusive('\n')` as `str::lines` gives it: without
/// its `\n` or `\r\n`.
fn line_of(piece: &[u8]) -> &[u8] {
    match piece.strip_suffix(b"\n") {
        Some(l) => l.strip_suffix(b"\r").unwrap_or(l),
        None => piece,
    }
}

/// `text.lines().count()`, counted with memchr: the tail of a several-MB
/// file is counted at memory speed.
fn line_count(text: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text).count();
    newlines + usize::from(!text.is_empty() && !text.ends_with(b"\n"))
}

/// At most `MAX_SHOWN` lines, then one saying how many more there are.
fn cap_shown(out: &mut Vec<DiffLine>) {
    if out.len() > MAX_SHOWN {
        let rest = out.len() - MAX_SHOWN;
        out.truncate(MAX_SHOWN);
        out.push(DiffLine {
            kind: LineKind::Skipped,
            text: format!("{rest} more lines of this change not shown"),
            old: None,
            new: None,
        });
    }
}

/// How many lines a fold line stands for.
fn skipped_count(line: &DiffLine) -> usize {
    line.text
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Length of the common start of `a` and `b`, compared a block at a time.
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Length of the common end of `a` and `b`.
pub fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    while i + BLOCK <= n && a[n - i - BLOCK..n - i] == b[n - i - BLOCK..n - i] {
        i += BLOCK;
    }
    i + a[..n - i]
        .iter()
        .rev()
        .zip(b[..n - i].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// The line diff of two texts, every line compared.
fn lines_of_diff(before: &str, after: &str) -> Vec<DiffLine> {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let ops = diff_ops(&a, &b);

    // Which unchanged lines are near enough to a change to be shown.
    let changed: Vec<bool> = ops.iter().map(|op| !matches!(op, Op::Same(..))).collect();
    let mut near = vec![false; ops.len()];
    for (i, &c) in changed.iter().enumerate() {
        if c {
            let from = i.saturating_sub(CONTEXT);
            let to = (i + CONTEXT + 1).min(ops.len());
            near[from..to].iter_mut().for_each(|n| *n = true);
        }
    }

    // Folding a single line saves nothing: show it.
    for i in 0..near.len() {
        let alone = !near[i] && (i == 0 || near[i - 1]) && (i + 1 == near.len() || near[i + 1]);
        if alone && ops.len() > 1 && changed.iter().any(|c| *c) {
            near[i] = true;
        }
    }

    let mut out = vec![];
    let mut skipped = 0;
    for (i, op) in ops.iter().enumerate() {
        if !near[i] {
            skipped += 1;
            continue;
        }
        if skipped > 0 {
            out.push(DiffLine::skipped(skipped));
            skipped = 0;
        }
        out.push(match *op {
            Op::Same(x, y) => DiffLine {
                kind: LineKind::Same,
                text: a[x].to_string(),
                old: Some(x + 1),
                new: Some(y + 1),
            },
            Op::Removed(x) => DiffLine {
                kind: LineKind::Removed,
                text: a[x].to_string(),
                old: Some(x + 1),
                new: None,
            },
            Op::Added(y) => DiffLine {
                kind: LineKind::Added,
                text: b[y].to_string(),
                old: None,
                new: Some(y + 1),
            },
        });
    }
    if skipped > 0 && !out.is_empty() {
        out.push(DiffLine::skipped(skipped));
    }
    out
}

/// Common prefix and suffix kept as they are; the region between diffed by
/// longest common subsequence (edits touch a few lines, so it is small).
fn diff_ops(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);

    let mut ops: Vec<Op> = (0..prefix).map(|i| Op::Same(i, i)).collect();
    let (n, m) = (ma.len(), mb.len());
    if (n + 1).saturating_mul(m + 1) <= MAX_TABLE {
        // lcs[i][j]: length of the longest common subsequence of ma[i..], mb[j..].
        let w = m + 1;
        let mut lcs = vec![0u32; (n + 1) * w];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * w + j] = if ma[i] == mb[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && ma[i] == mb[j] {
                ops.push(Op::Same(prefix + i, prefix + j));
                i += 1;
                j += 1;
            } else if j < m && (i == n || lcs[i * w + j + 1] >= lcs[(i + 1) * w + j]) {
                ops.push(Op::Added(prefix + j));
                j += 1;
            } else {
                ops.push(Op::Removed(prefix + i));
                i += 1;
            }
        }
        // Show removals before additions within each changed run.
        sort_runs(&mut ops);
    } else {
        ops.extend((0..n).map(|i| Op::Removed(prefix + i)));
        ops.extend((0..m).map(|j| Op::Added(prefix + j)));
    }
    ops.extend((0..suffix).map(|k| Op::Same(a.len() - suffix + k, b.len() - suffix + k)));
    ops
}

fn sort_runs(ops: &mut [Op]) {
    let mut start = 0;
    while start < ops.len() {
        if matches!(ops[start], Op::Same(..)) {
            start += 1;
            continue;
        }
        let end = ops[start..]
            .iter()
            .position(|o| matches!(o, Op::Same(..)))
            .map_or(ops.len(), |p| start + p);
        ops[start..end].sort_by_key(|o| match *o {
            Op::Removed(i) => (0, i),
            Op::Added(j) => (1, j),
            Op::Same(..) => (2, 0),
        });
        start = end;
    }
}

/// Contents from this size on have their secret values remembered.
const REMEMBER_FROM: usize = 64 * 1024;
/// How many contents' secret values are remembered.
const REMEMBERED: usize = 4;

type Remembered = Vec<(ContentHash, PathBuf, Vec<String>)>;
static SECRETS: Mutex<Remembered> = Mutex::new(Vec::new());

/// The secret values of a large content about to be recorded in the history
/// (see `write_atomic`, which works them out while the disk syncs); `None`
/// for a small one, which the history reads itself.
pub(crate) fn secret_values_of(path: &Path, bytes: &[u8]) -> Option<Vec<String>> {
    (bytes.len() >= REMEMBER_FROM).then(|| secret_values(path, &text_of(bytes)))
}

/// Remembers what `secret_values_of` found for the content with `hash`, so
/// the history entry's diff finds it ready.
pub(crate) fn remember_found_secret_values(
    path: &Path,
    hash: ContentHash,
    found: Option<Vec<String>>,
) {
    if let Some(found) = found {
        remember(path, hash, found);
    }
}

fn remember(path: &Path, hash: ContentHash, found: Vec<String>) {
    let mut memo = SECRETS.lock().unwrap_or_else(|p| p.into_inner());
    if !memo.iter().any(|(h, p, _)| *h == hash && p == path) {
        if memo.len() >= REMEMBERED {
            memo.remove(0);
        }
        memo.push((hash, path.to_path_buf(), found));
    }
}

/// File contents as text: borrowed when they are UTF-8, which
/// `str::from_utf8` checks several times faster than `from_utf8_lossy` walks.
fn text_of(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(t) => std::borrow::Cow::Borrowed(t),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// `secret_values` of file contents, remembered for a large content with a
/// known hash (then it is not read again).
fn remembered_secret_values(path: &Path, bytes: &[u8], hash: Option<ContentHash>) -> Vec<String> {
    let Some(hash) = hash.filter(|_| bytes.len() >= REMEMBER_FROM) else {
        return secret_values(path, &text_of(bytes));
    };
    let known = SECRETS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .find(|(h, p, _)| *h == hash && p == path)
        .map(|e| e.2.clone());
    if let Some(found) = known {
        return found;
    }
    let found = secret_values(path, &text_of(bytes));
    remember(path, hash, found.clone());
    found
}

/// Keys whose values (at any depth) are environment variables or headers.
const SECRET_CONTAINERS: &[&str] = &[
    "env",
    "envs",
    "environment",
    "headers",
    "http_headers",
    "requestinit",
];
/// Single keys whose string value is a secret wherever they appear.
const SECRET_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "apikey",
    "api_key",
    "authorization",
];

/// The values of env variables, headers and token-like keys in a config
/// file's text, so a diff of it can mask them the way the Servers view does.
/// A file that does not parse yields none (its diff is shown as it is).
pub fn secret_values(path: &Path, text: &str) -> Vec<String> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let format = match ext.as_str() {
        "toml" => Format::Toml,
        "yaml" | "yml" => Format::Yaml,
        _ => Format::Jsonc,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = vec![];
    // JSON(C) in one quick pass over the text: a several-MB file is not
    // parsed whole twice (before and after) for each edit.
    let quick = match format {
        Format::Jsonc => scan::secret_strings(text, true, &is_container, &is_secret).ok(),
        _ => None,
    };
    match quick {
        Some(found) => out = found,
        None => {
            let Ok(doc) = parse(format, text) else {
                return vec![];
            };
            collect(&doc.value, false, &mut out);
        }
    }
    // The same value as it is written inside a JSON or TOML string.
    let escaped: Vec<String> = out
        .iter()
        .filter_map(|v| serde_json::to_string(v).ok())
        .map(|q| q[1..q.len() - 1].to_string())
        .filter(|e| !out.contains(e))
        .collect();
    out.extend(escaped);
    out
}

fn is_container(key: &str) -> bool {
    SECRET_CONTAINERS
        .iter()
        .any(|c| key.eq_ignore_ascii_case(c))
}

/// A string value is a secret inside an env or headers container, or as the
/// value of a token-like key (`bearer_token_env_var` names a variable; it
/// holds no secret). Case-insensitive, without allocating: it is asked of
/// every key of a several-MB file.
fn is_secret(inside: bool, key: Option<&str>) -> bool {
    inside
        || key.is_some_and(|k| {
            let k = k.as_bytes();
            let has = |w: &str| {
                k.windows(w.len())
                    .any(|s| s.eq_ignore_ascii_case(w.as_bytes()))
            };
            let names_a_variable =
                k.len() >= 7 && k[k.len() - 7..].eq_ignore_ascii_case(b"env_var");
            SECRET_WORDS.iter().any(|w| has(w)) && !names_a_variable
        })
}

fn collect(v: &Value, inside: bool, out: &mut Vec<String>) {
    match v {
        Value::String(s) if inside => out.push(s.clone()),
        Value::Object(map) => {
            for (k, child) in map {
                if let Value::String(s) = child {
                    if is_secret(inside, Some(k)) {
                        out.push(s.clone());
                    }
                    continue;
                }
                collect(child, inside || is_container(k), out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect(i, inside, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(lines: &[DiffLine]) -> Vec<String> {
        lines
            .iter()
            .map(|l| {
                let sign = match l.kind {
                    LineKind::Same => " ",
                    LineKind::Removed => "-",
                    LineKind::Added => "+",
                    LineKind::Skipped => "~",
                };
                format!("{sign}{}", l.text)
            })
            .collect()
    }

    /// `line_diff` without its shortcut: every line compared.
    fn every_line(before: &str, after: &str) -> Vec<DiffLine> {
        let mut out = lines_of_diff(before, after);
        cap_shown(&mut out);
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, ..Default::default() })]

        /// Counting the far common lines instead of comparing them gives the same diff.
        #[test]
        fn the_shortcut_diff_is_the_full_diff(
            head in 0usize..30,
            tail in 0usize..30,
            a in proptest::collection::vec("[ab\r]{0,2}(\r?\n)?", 0..8),
            b in proptest::collection::vec("[ab\r]{0,2}(\r?\n)?", 0..8),
            last_newline in proptest::bool::ANY,
        ) {
            let h: String = (0..head).map(|i| format!("head {i}\n")).collect();
            let t: String = (0..tail).map(|i| format!("tail {i}\n")).collect();
            let t = if last_newline { t } else { t.trim_end_matches('\n').to_string() };
            let before = format!("{h}{}{t}", a.concat());
            let after = format!("{h}{}{t}", b.concat());
            proptest::prop_assert_eq!(line_diff(&before, &after), every_line(&before, &after));
        }
    }

    /// Found by the property above: the first line's `\n` becomes `\r\n`
    /// and one of three empty lines goes. The line diff removes the third,
    /// after the first changed byte; the lines after it are still folded the
    /// same way.
    #[test]
    fn a_line_ending_change_before_a_removal_is_cut_the_same_way() {
        let tail = "tail 0\ntail 1\ntail 2\ntail 3\ntail 4";
        let (before, after) = (format!("\n\n\n{tail}"), format!("\r\n\n{tail}"));
        let diff = line_diff(&before, &after);
        assert_eq!(diff, every_line(&before, &after));
        assert_eq!(diff.last().unwrap().text, "2 unchanged lines");
        let (before, after) = (
            format!("x\r\ny\n\n\n{tail}\n"),
            format!("x\ny\r\n\n{tail}\n"),
        );
        assert_eq!(line_diff(&before, &after), every_line(&before, &after));
        // and the common end is looked for after the lines that stay
        let (before, after) = (format!("\nb\r\n\n\n\r\n{tail}"), format!("\nb\n\r\n{tail}"));
        let diff = line_diff(&before, &after);
        assert_eq!(diff, every_line(&before, &after));
        assert_eq!(diff.last().unwrap().text, "2 unchanged lines");
    }

    /// Bytes that are not UTF-8 show as `�` in the lines shown; the lines
    /// only counted are not read as text at all.
    #[test]
    fn a_file_that_is_not_utf8_still_diffs_by_lines() {
        let mut before: Vec<u8> = (0..50)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        before.extend_from_slice(b"bad \xff here\nend\n");
        let after = [&before[..], b"more\n"].concat();
        let diff = file_diff_hashed(
            Path::new("x.json"),
            Some((&before, None)),
            Some((&after, None)),
        );
        assert_eq!(
            render(&diff),
            [
                "~49 unchanged lines",
                " line 49",
                " bad \u{fffd} here",
                " end",
                "+more"
            ]
        );
        assert_eq!(diff.last().unwrap().new, Some(53));
    }

    #[test]
    fn a_long_change_is_cut_the_same_way() {
        let before: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let after = before
            .replace("line 5\n", "five\n")
            .replace("line 1990\n", "x\n");
        let after = after.replace("line 7", "seven");
        assert_eq!(line_diff(&before, &after), every_line(&before, &after));
        let far: String = (0..2000).map(|i| format!("other {i}\n")).collect();
        assert_eq!(line_diff(&before, &far), every_line(&before, &far));
    }

    #[test]
    fn one_changed_line_shows_with_three_lines_of_context_and_folds_the_rest() {
        let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 10\n", "line ten\n");
        let d = line_diff(&before, &after);
        assert_eq!(
            render(&d),
            [
                "~6 unchanged lines",
                " line 7",
                " line 8",
                " line 9",
                "-line 10",
                "+line ten",
                " line 11",
                " line 12",
                " line 13",
                "~7 unchanged lines"
            ]
        );
        let removed = d.iter().find(|l| l.kind == LineKind::Removed).unwrap();
        assert_eq!((removed.old, removed.new), (Some(10), None));
    }

    #[test]
    fn a_single_unchanged_line_is_shown_rather_than_folded() {
        let before: String = (1..=12).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 5\n", "line five\n");
        let shown = render(&line_diff(&before, &after));
        assert_eq!(
            shown.first().map(String::as_str),
            Some(" line 1"),
            "{shown:?}"
        );
        assert_eq!(
            shown.last().map(String::as_str),
            Some("~4 unchanged lines"),
            "{shown:?}"
        );
    }

    #[test]
    fn insertions_and_removals_in_the_middle_are_found() {
        let d = line_diff("a\nb\nc\nd\n", "a\nc\nx\nd\n");
        assert_eq!(render(&d), [" a", "-b", " c", "+x", " d"]);
        assert!(
            line_diff("same\n", "same\n").is_empty(),
            "no change, no lines"
        );
        assert_eq!(render(&line_diff("", "new\n")), ["+new"]);
    }

    #[test]
    fn env_header_and_token_values_are_masked() {
        let before = "{\n  \"mcpServers\": {\n    \"gh\": {\"command\": \"x\", \"env\": {\"GITHUB_TOKEN\": \"ghp_before\"}}\n  }\n}\n";
        let after = "{\n  \"mcpServers\": {\n    \"gh\": {\"command\": \"x\", \"env\": {\"GITHUB_TOKEN\": \"ghp_after\"}, \"headers\": {\"Authorization\": \"Bearer abc\\\"def\"}, \"apiKey\": \"k-123\"}\n  }\n}\n";
        let d = file_diff(Path::new("mcp.json"), Some(before), Some(after));
        let all = render(&d).join("\n");
        for secret in ["ghp_before", "ghp_after", "abc", "k-123"] {
            assert!(!all.contains(secret), "{secret} is masked in:\n{all}");
        }
        assert!(all.contains("\"GITHUB_TOKEN\": \"•••\""), "{all}");

        let toml =
            "[mcp_servers.gh]\ncommand = \"x\"\n[mcp_servers.gh.env]\nTOKEN = \"tok-secret\"\n";
        let d = file_diff(Path::new("config.toml"), None, Some(toml));
        assert!(!render(&d).join("\n").contains("tok-secret"));
    }
}
