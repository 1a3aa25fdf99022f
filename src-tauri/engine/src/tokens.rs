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
    /// Borrowed, so nothing of the tool is copied to serialize it.
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Definition<'a> {
        name: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<&'a str>,
        input_schema: &'a Map<String, Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        output_schema: Option<&'a Map<String, Value>>,
    }
    serde_json::to_string(&Definition {
        name: &tool.name,
        title: tool.title.as_deref(),
        description: tool.description.as_deref(),
        input_schema: &tool.input_schema,
        output_schema: tool.output_schema.as_deref(),
    })
    .unwrap_or_default()
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
    let keyed = |tools: &[Tool]| -> Vec<(String, u64)> {
        tools
            .iter()
            .map(|t| {
                let text = definition_json(t);
                let k = key(&text);
                (text, k)
            })
            .collect()
    };
    let (texts, keys): (Vec<String>, Vec<u64>) = match tools.len() < 64 {
        true => keyed(tools),
        false => crate::parallel::map_chunks(tools, keyed),
    }
    .into_iter()
    .unzip();
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
    if texts.len() < 64 {
        return count_pieces(texts);
    }
    crate::parallel::map_chunks(texts, count_pieces)
}

/// The tokenizer splits a text into pieces (words, numbers, punctuation
/// runs) with its own pattern and encodes each piece alone, so a text's
/// count is the sum of its pieces' counts. Tool definitions repeat most
/// of their pieces (schema keywords, common words): each distinct piece
/// is encoded once per call, and ASCII texts (nearly all definitions) are
/// split by [`ascii_pieces`] rather than the pattern's regex.
fn count_pieces(texts: &[&str]) -> Vec<u32> {
    let tok = bpe_openai::o200k_base();
    let mut seen: HashMap<&str, u32> = HashMap::new();
    let mut count = |piece| {
        *seen
            .entry(piece)
            .or_insert_with(|| tok.bpe.count(piece.as_bytes()) as u32)
    };
    texts
        .iter()
        .map(|text| match text.is_ascii() {
            true => ascii_pieces(text).map(&mut count).sum(),
            false => tok.split(text).map(&mut count).sum(),
        })
        .collect()
}

/// `o200k_base`'s pre-tokenization of an ASCII text: the same pieces as its
/// pattern (tested against `bpe_openai`'s split), in one pass without a
/// regex. The pattern's alternatives, first match wins, for ASCII:
/// 1. an optional prefix (not a letter, digit, `\r` or `\n`), upper-case
///    letters, then lower-case ones, then an optional contraction (`'s`,
///    `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`, any case);
/// 2. the same with at least one upper-case letter and no lower-case one;
/// 3. one to three digits;
/// 4. an optional space, a run of punctuation, then any `\r`, `\n`, `/`;
/// 5. white space up to and including its last line break;
/// 6. white space to the end of the text;
/// 7. a run of white space but its last character (which goes with what
///    follows);
/// 8. white space.
fn ascii_pieces(text: &str) -> impl Iterator<Item = &str> {
    let b = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= b.len() {
            return None;
        }
        let start = at;
        at = ascii_piece_end(b, start);
        Some(&text[start..at])
    })
}

fn ascii_piece_end(b: &[u8], i: usize) -> usize {
    // Unicode White_Space within ASCII: tab, line feed, vertical tab, form
    // feed, carriage return, space.
    let space = |c: u8| matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ');
    let letter = |c: u8| c.is_ascii_alphabetic();
    let punct = |c: u8| !space(c) && !c.is_ascii_alphanumeric();
    let run = |from: usize, f: &dyn Fn(u8) -> bool| {
        from + b[from..].iter().take_while(|c| f(**c)).count()
    };
    let c = b[i];
    // 1 and 2: letters, maybe after one prefix character.
    if !c.is_ascii_digit() && c != b'\r' && c != b'\n' {
        let j = if letter(c) { i } else { i + 1 };
        let upper = run(j, &|c| c.is_ascii_uppercase());
        let lower = run(upper, &|c| c.is_ascii_lowercase());
        if lower > upper || upper > j {
            return contraction(b, lower);
        }
    }
    // 3
    if c.is_ascii_digit() {
        return (i + 1..(i + 3).min(b.len()))
            .find(|k| !b[*k].is_ascii_digit())
            .unwrap_or((i + 3).min(b.len()));
    }
    // 4
    let q = if c == b' ' { i + 1 } else { i };
    if q < b.len() && punct(b[q]) {
        let end = run(q, &punct);
        return run(end, &|c| matches!(c, b'\r' | b'\n' | b'/'));
    }
    // 5 to 8: white space.
    let end = run(i, &space);
    if let Some(last_break) = b[i..end].iter().rposition(|c| matches!(c, b'\r' | b'\n')) {
        return i + last_break + 1;
    }
    if end == b.len() || end - i == 1 {
        return end;
    }
    end - 1
}

/// After a word at `end`: past a contraction that follows it, if one does.
fn contraction(b: &[u8], end: usize) -> usize {
    if b.get(end) != Some(&b'\'') {
        return end;
    }
    let next = |k: usize| b.get(end + k).map(u8::to_ascii_lowercase);
    match (next(1), next(2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => end + 2,
        (Some(b'r'), Some(b'e')) | (Some(b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => end + 3,
        _ => end,
    }
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

    /// The ASCII split gives exactly the pieces of the pattern's regex.
    #[test]
    fn ascii_pieces_are_the_patterns_pieces() {
        let tok = bpe_openai::o200k_base();
        let same = |text: &str| {
            let ours: Vec<&str> = ascii_pieces(text).collect();
            let theirs: Vec<&str> = tok.split(text).collect();
            assert_eq!(ours, theirs, "{text:?}");
        };
        for text in [
            "",
            "Hello world",
            "don't DON'T they're We'VE I'm you'll he'd it's",
            "HELLOworld helloWorld HELLO's ABC",
            "12345 1 22 333 4444 a1b2 x99y",
            "  two spaces\n\n  indented\r\n\tTab  \t ",
            "end with spaces   ",
            "{\"name\":\"x\",\"inputSchema\":{\"type\":\"object\"}}",
            "a/b//c /// \"q\" ( x ) [1,2] 'quoted' '' 's 'S 'x",
            " !!\n\r/ ?! \x0b\x0cword\x0b \u{1}\u{1f}x",
            "   \n   ",
            "\n",
            " ",
            "x  ",
            "A  B",
            "'ll'LL're're",
        ] {
            same(text);
        }
        // Random texts over the characters the pattern treats differently.
        let alphabet = b"aZ09 \t\n\r\x0b'\"/:.,{}sStTrReEvVlLmMdD_-";
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..20_000 {
            let len = (state % 24) as usize;
            let text: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize] as char
                })
                .collect();
            same(&text);
        }
    }

    #[test]
    fn counts_by_pieces_equal_the_tokenizers_count() {
        let texts = [
            "{\"name\":\"mcp_gh_search\",\"description\":\"Search issues; don't page.\"}",
            "Ünïcödé text goes the regex's way: 東京 \u{200b}",
            "  spaced\n\nout  ",
        ];
        let counted = count_pieces(&texts);
        for (t, n) in texts.iter().zip(counted) {
            assert_eq!(n, count_text(t), "{t:?}");
        }
    }

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
