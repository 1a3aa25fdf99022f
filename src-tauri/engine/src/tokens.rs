//! What tool definitions cost in a model's context, counted with a real
//! tokenizer: OpenAI's `o200k_base` (GPT-4o and later), from the
//! `bpe-openai` crate, whose vocabulary is compiled into the binary (no
//! download at run time). Claude's tokenizer is not public; `o200k_base`
//! is the closest public one and is named next to every figure.
//!
//! A tool costs the JSON of what a client sends the model for it: name,
//! title, description, input schema and output schema — exactly those
//! fields, in that order, as the gateway offers them (see
//! [`definition_json`]). Counts are cached by the definition's text, so a
//! re-list that changes nothing costs a hash per tool.
//!
//! The tokenizer's tables take ~60 MB once loaded, so they are loaded on
//! the first count only.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use rmcp::model::Tool;
use serde_json::{Map, Value};

/// The tokenizer every figure is counted with, as shown next to it.
pub const TOKENIZER: &str = "o200k_base";

/// Most cached counts; past it the cache starts over (counts are cheap to
/// redo, memory is not).
const CACHE_LIMIT: usize = 100_000;

/// The JSON text a client sends the model for one tool: `name`, `title`,
/// `description`, `inputSchema`, `outputSchema` (absent fields left out).
pub fn definition_json(tool: &Tool) -> String {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(tool.name.to_string()));
    if let Some(t) = &tool.title {
        m.insert("title".into(), Value::String(t.clone()));
    }
    if let Some(d) = &tool.description {
        m.insert("description".into(), Value::String(d.to_string()));
    }
    m.insert(
        "inputSchema".into(),
        Value::Object((*tool.input_schema).clone()),
    );
    if let Some(o) = &tool.output_schema {
        m.insert("outputSchema".into(), Value::Object((**o).clone()));
    }
    serde_json::to_string(&Value::Object(m)).unwrap_or_default()
}

/// Tokens of `text` in [`TOKENIZER`].
pub fn count_text(text: &str) -> u32 {
    bpe_openai::o200k_base().count(text) as u32
}

fn key(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

static CACHE: Mutex<Option<HashMap<u64, u32>>> = Mutex::new(None);

/// Tokens of one tool's definition (cached by its text).
pub fn tool_tokens(tool: &Tool) -> u32 {
    count_definitions(std::slice::from_ref(tool))[0]
}

/// Tokens of each tool's definition, in order. Definitions counted before
/// are looked up; the rest are counted on both cores.
pub fn count_definitions(tools: &[Tool]) -> Vec<u32> {
    let texts: Vec<String> = tools.iter().map(definition_json).collect();
    let keys: Vec<u64> = texts.iter().map(|t| key(t)).collect();
    let mut out: Vec<Option<u32>> = {
        let cache = CACHE.lock().unwrap();
        keys.iter()
            .map(|k| cache.as_ref().and_then(|c| c.get(k).copied()))
            .collect()
    };
    let todo: Vec<usize> = (0..texts.len()).filter(|i| out[*i].is_none()).collect();
    if todo.is_empty() {
        return out.into_iter().map(|c| c.unwrap_or_default()).collect();
    }
    let counted = count_parallel(&todo.iter().map(|i| texts[*i].as_str()).collect::<Vec<_>>());
    let mut cache = CACHE.lock().unwrap();
    let cache = cache.get_or_insert_with(HashMap::new);
    if cache.len() + counted.len() > CACHE_LIMIT {
        cache.clear();
    }
    for (i, n) in todo.into_iter().zip(counted) {
        out[i] = Some(n);
        cache.insert(keys[i], n);
    }
    out.into_iter().map(|c| c.unwrap_or_default()).collect()
}

/// Count many texts, split over the machine's cores when there are enough.
fn count_parallel(texts: &[&str]) -> Vec<u32> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    if threads < 2 || texts.len() < 64 {
        return texts.iter().map(|t| count_text(t)).collect();
    }
    let chunk = texts.len().div_ceil(threads);
    std::thread::scope(|s| {
        let parts: Vec<_> = texts
            .chunks(chunk)
            .map(|c| s.spawn(move || c.iter().map(|t| count_text(t)).collect::<Vec<u32>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// The biggest contributors of a total, largest first: (name, tokens).
pub fn biggest<'a>(items: impl IntoIterator<Item = (&'a str, u32)>, n: usize) -> Vec<(String, u32)> {
    let mut v: Vec<(String, u32)> = items.into_iter().map(|(k, t)| (k.to_string(), t)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(n);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_is_its_five_fields_in_order() {
        let schema: Map<String, Value> =
            serde_json::from_str(r#"{"type":"object","properties":{"q":{"type":"string"}}}"#)
                .unwrap();
        let mut t = Tool::new("mcp_gh_search", "Search issues", schema);
        t.title = Some("Search".into());
        let text = definition_json(&t);
        assert_eq!(
            text,
            r#"{"name":"mcp_gh_search","title":"Search","description":"Search issues","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}"#
        );
        let n = tool_tokens(&t);
        assert_eq!(n, count_text(&text));
        assert!(n > 10, "{n}");
        // The same definition again comes from the cache, with the same count.
        assert_eq!(count_definitions(&[t.clone(), t]), vec![n, n]);
    }
}
