//! Tool search mode: instead of every tool, the gateway offers
//! `search_tools` (BM25 over names and descriptions) and `call_tool`, for
//! clients that cannot take many tools.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{json, Value};

pub const SEARCH_TOOL: &str = "search_tools";
pub const CALL_TOOL: &str = "call_tool";
/// Matches returned when the query names no limit, and the most it may ask.
pub const DEFAULT_LIMIT: usize = 8;
pub const MAX_LIMIT: usize = 50;

// BM25's usual constants; a name's words count this many times (a tool is
// first of all what it is called).
const K1: f64 = 1.2;
const B: f64 = 0.75;
const NAME_WEIGHT: usize = 3;

/// The two tools a client sees in search mode.
pub fn tools(total: usize) -> Vec<Tool> {
    let search = Tool::new(
        SEARCH_TOOL,
        format!("Find tools among the {total} tools of the MCP servers Switchboard runs. Describe what you want to do in a few words; returns the best matching tools with their names, descriptions and input schemas. Then run one with {CALL_TOOL}."),
        rmcp::object!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do, e.g. \"read a file\" or \"create a GitHub issue\""},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT, "description": "How many tools to return at most"}
            },
            "required": ["query"]
        }),
    )
    .with_annotations(ToolAnnotations::new().read_only(true).open_world(false));
    let call = Tool::new(
        CALL_TOOL,
        format!("Run a tool found with {SEARCH_TOOL}, by its exact name, with arguments that match its input schema. Returns that tool's result."),
        rmcp::object!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name as search_tools returned it"},
                "arguments": {"type": "object", "description": "The tool's arguments", "additionalProperties": true}
            },
            "required": ["name"]
        }),
    );
    vec![search, call]
}

/// What `search_tools` answers with for one tool.
pub fn describe(t: &Tool) -> Value {
    let mut v = json!({ "name": t.name, "inputSchema": t.input_schema });
    if let Some(d) = &t.description {
        v["description"] = json!(d);
    }
    if let Some(title) = &t.title {
        v["title"] = json!(title);
    }
    if let Some(o) = &t.output_schema {
        v["outputSchema"] = json!(o);
    }
    v
}

/// Words of a name or text: split at everything that is not a letter or a
/// digit and at lower→upper case changes (`listIssues` → list, issues),
/// lower-cased.
pub fn words(text: &str) -> Vec<String> {
    let mut out = vec![];
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A BM25 index over one tool list; built once per list (cheap: a few
/// milliseconds for 10,000 tools).
pub struct SearchIndex {
    tools: Arc<Vec<Tool>>,
    /// Per tool: term → frequency, and the document length.
    docs: Vec<(HashMap<String, u32>, u32)>,
    /// Term → number of tools containing it.
    df: HashMap<String, u32>,
    avg_len: f64,
}

impl SearchIndex {
    pub fn new(tools: Arc<Vec<Tool>>) -> SearchIndex {
        let mut docs = Vec::with_capacity(tools.len());
        let mut df: HashMap<String, u32> = HashMap::new();
        let mut total = 0u64;
        for t in tools.iter() {
            let mut tf: HashMap<String, u32> = HashMap::new();
            let mut len = 0u32;
            let name_words = words(&t.name);
            for w in name_words {
                *tf.entry(w).or_default() += NAME_WEIGHT as u32;
                len += NAME_WEIGHT as u32;
            }
            let text = [t.title.as_deref(), t.description.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            for w in words(&text) {
                *tf.entry(w).or_default() += 1;
                len += 1;
            }
            for k in tf.keys() {
                *df.entry(k.clone()).or_default() += 1;
            }
            total += len as u64;
            docs.push((tf, len));
        }
        let avg_len = if docs.is_empty() {
            1.0
        } else {
            (total as f64 / docs.len() as f64).max(1.0)
        };
        SearchIndex {
            tools,
            docs,
            df,
            avg_len,
        }
    }

    pub fn tools(&self) -> &Arc<Vec<Tool>> {
        &self.tools
    }

    /// The best `limit` tools for `query`, best first, with their scores;
    /// ties keep list order. Tools matching no word of the query are left out.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(&Tool, f64)> {
        let mut q = words(query);
        q.sort();
        q.dedup();
        let n = self.docs.len() as f64;
        let idf: Vec<(String, f64)> = q
            .into_iter()
            .filter_map(|w| {
                let df = *self.df.get(&w)? as f64;
                Some((w, ((n - df + 0.5) / (df + 0.5) + 1.0).ln()))
            })
            .collect();
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(i, (tf, len))| {
                let mut score = 0.0;
                for (w, idf) in &idf {
                    if let Some(&f) = tf.get(w) {
                        let f = f as f64;
                        score += idf * f * (K1 + 1.0)
                            / (f + K1 * (1.0 - B + B * *len as f64 / self.avg_len));
                    }
                }
                (score > 0.0).then_some((i, score))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(limit);
        scored
            .into_iter()
            .map(|(i, s)| (&self.tools[i], s))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> Tool {
        serde_json::from_value(
            json!({"name": name, "description": description, "inputSchema": {"type": "object"}}),
        )
        .unwrap()
    }

    #[test]
    fn words_split_names_and_camel_case() {
        assert_eq!(
            words("mcp_github_listIssues"),
            vec!["mcp", "github", "list", "issues"]
        );
        assert_eq!(words("Read a FILE, v2!"), vec!["read", "a", "file", "v2"]);
    }

    #[test]
    fn names_and_descriptions_rank_the_right_tool_first() {
        let tools = Arc::new(vec![
            tool(
                "mcp_fs_read_file",
                "Read the complete contents of a file from the file system",
            ),
            tool(
                "mcp_fs_write_file",
                "Create a new file or overwrite an existing file",
            ),
            tool(
                "mcp_github_create_issue",
                "Create a new issue in a GitHub repository",
            ),
            tool(
                "mcp_github_list_issues",
                "List issues in a GitHub repository",
            ),
            tool(
                "mcp_time_get_current_time",
                "Get the current time in a given timezone",
            ),
        ]);
        let idx = SearchIndex::new(tools);
        let top = |q: &str| idx.search(q, 3).first().map(|(t, _)| t.name.to_string());
        assert_eq!(top("read a file").as_deref(), Some("mcp_fs_read_file"));
        assert_eq!(
            top("open an issue on github").as_deref(),
            Some("mcp_github_create_issue")
        );
        assert_eq!(
            top("what time is it").as_deref(),
            Some("mcp_time_get_current_time")
        );
        assert_eq!(
            top("list issues").as_deref(),
            Some("mcp_github_list_issues")
        );
        assert!(idx.search("zebra", 3).is_empty());
        assert_eq!(idx.search("file", 1).len(), 1);
    }
}
