//! Readable line diffs of a file before and after a write, as the History
//! view and `switchboard history` show them: the changed lines with a few
//! lines of context, long unchanged stretches folded, secret values masked.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::redact::Redactor;
use crate::sources::read::parse;
use crate::writer::doc::Format;

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
    let redactor = Redactor::default();
    let mut secrets = vec![];
    for text in [before, after].into_iter().flatten() {
        secrets.extend(secret_values(path, text));
    }
    redactor.set(secrets);
    let mut lines = line_diff(before.unwrap_or(""), after.unwrap_or(""));
    if !redactor.is_empty() {
        for l in &mut lines {
            l.text = redactor.apply(&l.text);
        }
    }
    lines
}

/// A line diff: changed lines with `CONTEXT` lines around them.
pub fn line_diff(before: &str, after: &str) -> Vec<DiffLine> {
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
    let Ok(doc) = parse(format, text.strip_prefix('\u{feff}').unwrap_or(text)) else {
        return vec![];
    };
    let mut out = vec![];
    collect(&doc.value, false, &mut out);
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

fn collect(v: &Value, inside: bool, out: &mut Vec<String>) {
    match v {
        Value::String(s) if inside => out.push(s.clone()),
        Value::Object(map) => {
            for (k, child) in map {
                let key = k.to_ascii_lowercase();
                let container = SECRET_CONTAINERS.contains(&key.as_str());
                if let Value::String(s) = child {
                    // `bearer_token_env_var` names a variable; it holds no secret.
                    let names_a_variable = key.ends_with("env_var");
                    if inside || (SECRET_WORDS.iter().any(|w| key.contains(w)) && !names_a_variable)
                    {
                        out.push(s.clone());
                    }
                    continue;
                }
                collect(child, inside || container, out);
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
