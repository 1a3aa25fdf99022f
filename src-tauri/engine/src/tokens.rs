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
//! The tokenizer's tables are big (32 MB compiled in, ~65 MB in memory
//! once loaded), so the counting is pluggable: the `switchboard` CLI counts
//! in its own process ([`use_in_process`]), while the desktop app hands the
//! definitions to its `switchboard tokens` sidecar ([`use_program`]) and
//! keeps only the counts, so the app's binary and memory carry none of it.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

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

/// Counts many texts at once, in order.
pub type Counter = Box<dyn Fn(&[&str]) -> Result<Vec<u32>, String> + Send + Sync>;

static COUNTER: OnceLock<Counter> = OnceLock::new();

/// Count in this process with the compiled-in tokenizer (the CLI, tests).
pub fn use_in_process() {
    let _ = COUNTER.set(Box::new(|texts| Ok(count_parallel(texts))));
}

/// Count with `program tokens` (the app's sidecar): definitions go to its
/// stdin as one JSON array of strings, counts come back as one JSON array.
pub fn use_program(program: PathBuf) {
    let _ = COUNTER.set(Box::new(move |texts| count_with(&program, texts)));
}

/// Most time a `switchboard tokens` run may take.
const PROGRAM_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

fn count_with(program: &std::path::Path, texts: &[&str]) -> Result<Vec<u32>, String> {
    use std::io::Write;
    let input = serde_json::to_vec(texts).map_err(|e| e.to_string())?;
    let mut child = std::process::Command::new(program)
        .arg("tokens")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {} tokens: {e}", program.display()))?;
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let (tx, rx) = std::sync::mpsc::channel();
    let pid = child.id();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(PROGRAM_TIMEOUT) {
        Ok(r) => r.map_err(|e| e.to_string())?,
        Err(_) => {
            let _ = nix_kill(pid);
            return Err(format!(
                "{} tokens did not answer within {PROGRAM_TIMEOUT:?}",
                program.display()
            ));
        }
    };
    let _ = writer.join();
    if !out.status.success() {
        return Err(format!(
            "{} tokens failed: {}",
            program.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let counts: Vec<u32> = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "{} tokens answered no list of counts: {e}",
            program.display()
        )
    })?;
    if counts.len() != texts.len() {
        return Err(format!(
            "{} tokens answered {} counts for {} definitions",
            program.display(),
            counts.len(),
            texts.len()
        ));
    }
    Ok(counts)
}

fn nix_kill(pid: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    #[cfg(not(unix))]
    let _ = pid;
    Ok(())
}

/// Tokens of `text` in [`TOKENIZER`], counted in this process.
pub fn count_text(text: &str) -> u32 {
    bpe_openai::o200k_base().count(text) as u32
}

/// The counts of `texts` with the counter in use; `None` (and one warning
/// on stderr) when no counter was set or it failed.
fn count_many(texts: &[&str]) -> Option<Vec<u32>> {
    let Some(counter) = COUNTER.get() else {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| {
            eprintln!("switchboard: no tokenizer set up; token counts are left at 0")
        });
        return None;
    };
    match counter(texts) {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("switchboard: token counts not available: {e}");
            None
        }
    }
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
    let Some(counted) = count_many(&todo.iter().map(|i| texts[*i].as_str()).collect::<Vec<_>>())
    else {
        return out.into_iter().map(|c| c.unwrap_or_default()).collect();
    };
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

/// Count many texts in this process, split over the machine's cores when
/// there are enough.
pub fn count_parallel(texts: &[&str]) -> Vec<u32> {
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
pub fn biggest<'a>(
    items: impl IntoIterator<Item = (&'a str, u32)>,
    n: usize,
) -> Vec<(String, u32)> {
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
        use_in_process();
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
