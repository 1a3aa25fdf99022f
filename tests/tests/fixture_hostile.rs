//! The fixture server's hostile flags (issue 11): each test runs the binary and checks that
//! the behaviour really happens, mostly with raw newline-delimited JSON-RPC over stdio (so
//! nothing in a client library hides what the server sends).

use std::{
    process::Stdio,
    time::{Duration, Instant},
};

use futures::StreamExt as _;
use rmcp::{transport::TokioChildProcess, ServiceExt};
use serde_json::{json, Value};
use switchboard_tests::{spawn_sse_fixture, FIXED_TOOLS};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    process::{Child, ChildStdin, ChildStdout, Command},
    sync::mpsc,
    task::JoinHandle,
};

const BIN: &str = env!("CARGO_BIN_EXE_fixture-server");
/// Deadline for anything that should happen.
const T: Duration = Duration::from_secs(20);

/// The fixture over stdio, driven by hand. Stderr is read by a task into `stderr` as raw
/// lines (bytes, without the `\n`).
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: mpsc::UnboundedReceiver<Vec<u8>>,
    stderr_task: JoinHandle<()>,
    /// Messages read while waiting for something else (notifications, other responses).
    seen: Vec<Value>,
}

impl Raw {
    fn spawn(args: &[&str]) -> Raw {
        Self::spawn_with(args, |_| {})
    }

    fn spawn_with(args: &[&str], tweak: impl FnOnce(&mut Command)) -> Raw {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        tweak(&mut cmd);
        let mut child = cmd.spawn().expect("spawn fixture-server");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let (tx, stderr) = mpsc::unbounded_channel();
        let stderr_task = tokio::spawn(async move {
            loop {
                let mut line = Vec::new();
                match err.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if line.last() == Some(&b'\n') {
                            line.pop();
                        }
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Raw {
            child,
            stdin,
            stdout,
            stderr,
            stderr_task,
            seen: Vec::new(),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id().expect("running")
    }

    async fn send(&mut self, msg: Value) {
        let mut line = msg.to_string().into_bytes();
        line.push(b'\n');
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(&line).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Next message from stdout (panics after `T` or at EOF).
    async fn next(&mut self) -> Value {
        let mut line = Vec::new();
        let n = tokio::time::timeout(T, self.stdout.read_until(b'\n', &mut line))
            .await
            .expect("no message from the server in time")
            .unwrap();
        assert!(n > 0, "server closed stdout");
        serde_json::from_slice(&line).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}",
                String::from_utf8_lossy(&line[..line.len().min(200)])
            )
        })
    }

    /// Sends a request and reads until its response; everything else read meanwhile goes to `seen`.
    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send_request(id, method, params).await;
        self.response(id).await
    }

    async fn send_request(&mut self, id: u64, method: &str, params: Value) {
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.send(msg).await;
    }

    async fn response(&mut self, id: u64) -> Value {
        if let Some(i) = self
            .seen
            .iter()
            .position(|m| m["id"] == json!(id) && m.get("method").is_none())
        {
            return self.seen.remove(i);
        }
        loop {
            let m = self.next().await;
            if m["id"] == json!(id) && m.get("method").is_none() {
                return m;
            }
            self.seen.push(m);
        }
    }

    /// initialize + notifications/initialized.
    async fn initialize(&mut self) -> Value {
        let r = self
            .request(
                0,
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile-test", "version": "0"}}),
            )
            .await;
        assert!(r.get("result").is_some(), "{r}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        r
    }

    async fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        let r = self
            .request(
                id,
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
            )
            .await;
        r.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {tool}: {r}"))
    }

    async fn stats(&mut self, id: u64) -> Value {
        let r = self.call(id, "stats", json!({})).await;
        // JSON text (and the same as structured content).
        let text = r["content"][0]["text"].as_str().unwrap();
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(v, r["structuredContent"]);
        v
    }

    /// Reads stderr lines until one satisfies `pred`; returns it.
    async fn stderr_until(&mut self, what: &str, pred: impl Fn(&[u8]) -> bool) -> Vec<u8> {
        let deadline = Instant::now() + T;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.stderr.recv()).await {
                Ok(Some(line)) if pred(&line) => return line,
                Ok(Some(_)) => {}
                Ok(None) => panic!("stderr closed before {what}"),
                Err(_) => panic!("no stderr line {what} within {T:?}"),
            }
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn alive(pid: u32) -> bool {
    // A zombie still has /proc/<pid>; treat state Z as dead.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .chars()
                .next();
            state != Some('Z')
        }
        Err(_) => false,
    }
}

async fn wait_dead(pid: u32) -> bool {
    let deadline = Instant::now() + T;
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

async fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    tokio::time::timeout(T, child.wait())
        .await
        .expect("server did not exit in time")
        .unwrap()
}

// ---- --stderr-garbage ----

#[tokio::test]
async fn stderr_garbage_then_alive_lines_and_death_by_sigpipe() {
    use std::os::unix::process::ExitStatusExt as _;
    let mut s = Raw::spawn(&["--stderr-garbage"]);
    // Everything up to `alive 3`, in order.
    let mut lines = Vec::new();
    loop {
        let line = s.stderr_until("alive 3", |_| true).await;
        let done = line == b"alive 3";
        lines.push(line);
        if done {
            break;
        }
    }
    let bad: Vec<usize> = (0..lines.len())
        .filter(|&i| std::str::from_utf8(&lines[i]).is_err())
        .collect();
    assert!(
        !bad.is_empty() && bad[0] == 0,
        "the first line is not UTF-8"
    );
    assert!(contains(&lines[0], b"\xff\xfe"), "{:?}", lines[0]);
    assert!(
        bad.len() >= 4,
        "an invalid line at start and every tick: {bad:?}"
    );
    let long: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].len() == 1024 * 1024)
        .collect();
    assert_eq!(
        long,
        [1],
        "exactly one 1 MiB line, right after the first bad line"
    );
    let alive_at: Vec<usize> = (0..4)
        .map(|n| {
            lines
                .iter()
                .position(|l| *l == format!("alive {n}").into_bytes())
                .expect("alive N")
        })
        .collect();
    assert!(
        alive_at.windows(2).all(|w| w[0] < w[1]) && alive_at[0] > 1,
        "{alive_at:?}"
    );
    // Meanwhile it serves.
    s.initialize().await;
    let r = s.call(1, "echo", json!({"text": "still here"})).await;
    assert_eq!(r["content"][0]["text"], "still here");
    // The stderr reader goes away: the next tick's write kills the server with SIGPIPE.
    s.stderr_task.abort();
    let _ = s.stderr_task.await;
    s.stderr.close();
    let status = wait_exit(&mut s.child).await;
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
}

// ---- --description-bytes ----

#[tokio::test]
async fn ten_thousand_tools_with_10kb_descriptions_list_in_pages() {
    let start = Instant::now();
    let mut cmd = Command::new(BIN);
    cmd.args([
        "--tools",
        "10000",
        "--description-bytes",
        "10240",
        "--page-size",
        "500",
    ]);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let tools = tokio::time::timeout(Duration::from_secs(60), client.list_all_tools())
        .await
        .expect("listing timed out")
        .unwrap();
    assert_eq!(tools.len(), FIXED_TOOLS.len() + 10_000);
    let generated = &tools[FIXED_TOOLS.len()..];
    assert!(generated
        .iter()
        .all(|t| t.description.as_deref().map(str::len) == Some(10_240)));
    assert!(generated[0]
        .description
        .as_deref()
        .unwrap()
        .starts_with("Generated tool"));
    assert_eq!(
        tools[0].description.as_deref(),
        Some("Returns `text` unchanged"),
        "fixed tools unchanged"
    );
    client.cancel().await.unwrap();
    eprintln!(
        "10 000 tools x 10 KB listed in pages of 500 in {:?}",
        start.elapsed()
    );

    // Short lengths cut the usual text; without paging it is one page.
    let mut s = Raw::spawn(&["--tools", "3", "--description-bytes", "5"]);
    s.initialize().await;
    let r = s.request(1, "tools/list", json!({})).await;
    let list = r["result"]["tools"].as_array().unwrap();
    assert_eq!(list.len(), FIXED_TOOLS.len() + 3);
    assert_eq!(list[FIXED_TOOLS.len()]["description"], "Gener");
    assert!(r["result"].get("nextCursor").is_none(), "{}", r["result"]);
}

// ---- --list-changed-burst, --burst-on-start, stats ----

fn is_list_changed(m: &Value) -> bool {
    m["method"] == "notifications/tools/list_changed"
}

#[tokio::test]
async fn list_changed_burst_on_start_and_by_tool_and_the_relist_count() {
    let mut s = Raw::spawn(&["--list-changed-burst", "500", "--burst-on-start"]);
    s.initialize().await;
    let mut n = 0;
    while n < 500 {
        let m = s.next().await;
        assert!(is_list_changed(&m), "{m}");
        n += 1;
    }
    let st = s.stats(1).await;
    assert_eq!(st["listChangedSent"], 500);
    assert_eq!(st["toolsListRequests"], 0);
    assert!(s.seen.is_empty(), "nothing after the 500: {:?}", s.seen);

    // The tool: `burst` sends N (or `count`) back to back, then answers.
    let r = s.call(2, "burst", json!({})).await;
    assert_eq!(
        r["content"][0]["text"],
        "sent 500 notifications/tools/list_changed"
    );
    assert_eq!(s.seen.drain(..).filter(is_list_changed).count(), 500);
    let r = s.call(3, "burst", json!({"count": 7})).await;
    assert_eq!(
        r["content"][0]["text"],
        "sent 7 notifications/tools/list_changed"
    );
    assert_eq!(s.seen.drain(..).filter(is_list_changed).count(), 7);

    // Every tools/list is counted.
    for id in 10..13 {
        let r = s.request(id, "tools/list", json!({})).await;
        assert!(r["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "burst"));
    }
    let st = s.stats(20).await;
    assert_eq!(st["toolsListRequests"], 3, "{st}");
    assert_eq!(st["listChangedSent"], 1007, "{st}");
    assert_eq!(st["calls"], 4, "stats, burst, burst, stats: {st}");

    // Without --burst-on-start nothing comes after initialized; without the flag no `burst`.
    let mut s = Raw::spawn(&["--list-changed-burst", "5"]);
    s.initialize().await;
    assert_eq!(s.stats(1).await["listChangedSent"], 0);
    assert!(s.seen.is_empty(), "{:?}", s.seen);
    let mut s = Raw::spawn(&[]);
    s.initialize().await;
    let r = s
        .request(1, "tools/call", json!({"name": "burst", "arguments": {}}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

// ---- --hang METHOD, --hang-after-first ----

/// A valid request of each method `--hang` accepts (with `--resources`).
fn hang_cases() -> Vec<(&'static str, Value)> {
    vec![
        ("tools/list", json!({})),
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        ),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "fixture://greeting"})),
        ("resources/subscribe", json!({"uri": "fixture://counter"})),
        ("prompts/list", json!({})),
        (
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        ),
        ("ping", Value::Null),
    ]
}

fn hanging_line(method: &str) -> impl Fn(&[u8]) -> bool + '_ {
    move |l: &[u8]| contains(l, format!("hanging {method} request").as_bytes())
}

fn probe_params(probe: &str) -> Value {
    if probe == "ping" {
        Value::Null
    } else {
        json!({})
    }
}

async fn check_hang(method: &'static str, params: Value) {
    let mut s = Raw::spawn(&["--resources", "--hang", method]);
    s.initialize().await;
    s.send_request(2, method, params).await;
    // The server says the request is parked in its never-ending wait...
    s.stderr_until(&format!("hanging {method}"), hanging_line(method))
        .await;
    // ...and keeps answering other requests (sent later, answered, while 2 stays pending).
    let probe = if method == "ping" {
        "tools/list"
    } else {
        "ping"
    };
    let r = s.request(3, probe, probe_params(probe)).await;
    assert!(r.get("result").is_some(), "{method}: {probe} {r}");
    let r = s.request(4, probe, probe_params(probe)).await;
    assert!(r.get("result").is_some(), "{method}: {r}");
    assert!(
        !s.seen.iter().any(|m| m["id"] == 2),
        "{method} was answered: {:?}",
        s.seen
    );
    assert!(alive(s.pid()));
}

#[tokio::test]
async fn hang_each_method() {
    // Without --hang the same requests are answered with results.
    let mut s = Raw::spawn(&["--resources"]);
    s.initialize().await;
    for (i, (method, params)) in hang_cases().into_iter().enumerate() {
        let r = s.request(i as u64 + 1, method, params).await;
        assert!(r.get("result").is_some(), "{method}: {r}");
    }
    futures::future::join_all(hang_cases().into_iter().map(|(m, p)| check_hang(m, p))).await;
}

#[tokio::test]
async fn hang_tools_list_after_the_first_listing() {
    let mut s = Raw::spawn(&[
        "--tools",
        "5",
        "--page-size",
        "4",
        "--hang",
        "tools/list",
        "--hang-after-first",
    ]);
    s.initialize().await;
    // The first listing, every page, is answered.
    let (mut cursor, mut names, mut id, mut pages) = (Value::Null, Vec::new(), 1, 0);
    loop {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let r = s.request(id, "tools/list", params).await;
        id += 1;
        pages += 1;
        names.extend(
            r["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].clone()),
        );
        cursor = r["result"]
            .get("nextCursor")
            .cloned()
            .unwrap_or(Value::Null);
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(names.len(), FIXED_TOOLS.len() + 5);
    // The next listing hangs.
    s.send_request(100, "tools/list", json!({})).await;
    s.stderr_until("hanging tools/list", hanging_line("tools/list"))
        .await;
    let st = s.stats(101).await;
    assert_eq!(st["toolsListRequests"], pages + 1, "{st}");
    assert_eq!(st["hungRequests"], 1, "{st}");
    // A page request with a cursor is still answered (documented).
    let r = s.request(102, "tools/list", json!({"cursor": "4"})).await;
    assert_eq!(r["result"]["tools"].as_array().unwrap().len(), 4);
    assert!(!s.seen.iter().any(|m| m["id"] == 100), "{:?}", s.seen);

    // Other methods: the first request is answered, the second hangs.
    let mut s = Raw::spawn(&[
        "--resources",
        "--hang",
        "resources/read",
        "--hang-after-first",
    ]);
    s.initialize().await;
    let r = s
        .request(1, "resources/read", json!({"uri": "fixture://greeting"}))
        .await;
    assert_eq!(r["result"]["contents"][0]["text"], "Hello from fixture");
    s.send_request(2, "resources/read", json!({"uri": "fixture://greeting"}))
        .await;
    s.stderr_until("hanging resources/read", hanging_line("resources/read"))
        .await;
    assert!(s
        .request(3, "ping", Value::Null)
        .await
        .get("result")
        .is_some());
    assert!(!s.seen.iter().any(|m| m["id"] == 2), "{:?}", s.seen);
}

// ---- --repeat-cursor ----

#[tokio::test]
async fn repeat_cursor_on_every_list() {
    let mut s = Raw::spawn(&[
        "--tools",
        "6",
        "--page-size",
        "2",
        "--repeat-cursor",
        "--resources",
    ]);
    s.initialize().await;
    let mut id = 0;
    for (method, key) in [
        ("tools/list", "tools"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
        ("prompts/list", "prompts"),
    ] {
        let mut params = json!({});
        for round in 0..5 {
            id += 1;
            let r = s.request(id, method, params.clone()).await;
            let result = &r["result"];
            assert_eq!(result["nextCursor"], "1", "{method} round {round}: {r}");
            assert!(result[key].is_array(), "{method}: {r}");
            if method == "tools/list" {
                let first = result["tools"][0]["name"].as_str().unwrap();
                assert_eq!(
                    first,
                    if round == 0 { "echo" } else { "add" },
                    "offset 1 every time after the first"
                );
            }
            params = json!({"cursor": "1"});
        }
    }
    // Without the flag the single-page lists end (templates and prompts paginate too).
    let mut s = Raw::spawn(&["--page-size", "2", "--resources"]);
    s.initialize().await;
    for (i, method) in ["resources/templates/list", "prompts/list"]
        .into_iter()
        .enumerate()
    {
        let r = s.request(i as u64 + 1, method, json!({})).await;
        assert!(r["result"].get("nextCursor").is_none(), "{method}: {r}");
    }
    let r = s.request(3, "tools/list", json!({})).await;
    assert_eq!(r["result"]["nextCursor"], "2");
}

// ---- --ignore-sigterm, --ignore-stdin-eof, --spawn-grandchild ----

fn grandchild_pid(line: &[u8]) -> u32 {
    std::str::from_utf8(line)
        .unwrap()
        .strip_prefix("grandchild ")
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn ignores_sigterm_and_stdin_eof_with_a_grandchild_in_its_group() {
    let mut s = Raw::spawn_with(
        &[
            "--ignore-sigterm",
            "--ignore-stdin-eof",
            "--spawn-grandchild",
        ],
        |c| {
            c.process_group(0); // the server leads its own group
        },
    );
    let pid = s.pid();
    let gc = grandchild_pid(
        &s.stderr_until("grandchild PID", |l| l.starts_with(b"grandchild "))
            .await,
    );
    assert!(alive(gc));
    assert_eq!(
        unsafe { libc::getpgid(gc as libc::pid_t) },
        pid as libc::pid_t,
        "same process group"
    );
    s.initialize().await;
    for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0);
    }
    // A signal sent before this round trip is delivered before the server runs again to answer.
    let r = s.call(1, "pid", json!({})).await;
    assert_eq!(r["content"][0]["text"], pid.to_string());
    assert!(alive(pid) && alive(gc));

    // stdin EOF: it says so and stays.
    drop(s.stdin.take());
    s.stderr_until("stdin EOF", |l| contains(l, b"stdin EOF, staying alive"))
        .await;
    let exited = tokio::time::timeout(Duration::from_millis(500), s.child.wait()).await;
    assert!(exited.is_err(), "server exited after stdin EOF: {exited:?}");
    assert!(alive(pid));

    // Only SIGKILL (of the group) ends them.
    assert_eq!(
        unsafe { libc::killpg(pid as libc::pid_t, libc::SIGKILL) },
        0
    );
    assert!(wait_dead(gc).await, "grandchild {gc} survived killpg");
    wait_exit(&mut s.child).await;

    // EOF before initialize, too.
    let mut s = Raw::spawn(&["--ignore-stdin-eof"]);
    drop(s.stdin.take());
    s.stderr_until("stdin EOF", |l| contains(l, b"stdin EOF, staying alive"))
        .await;
    assert!(s.child.try_wait().unwrap().is_none());
}

#[tokio::test]
async fn without_the_flags_sigterm_and_eof_end_the_server() {
    use std::os::unix::process::ExitStatusExt as _;
    let mut s = Raw::spawn(&["--spawn-grandchild"]);
    let gc = grandchild_pid(
        &s.stderr_until("grandchild PID", |l| l.starts_with(b"grandchild "))
            .await,
    );
    s.initialize().await;
    unsafe { libc::kill(s.pid() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(wait_exit(&mut s.child).await.signal(), Some(libc::SIGTERM));
    // Not waited for or killed by the server: it outlives it.
    assert!(alive(gc));
    unsafe { libc::kill(gc as libc::pid_t, libc::SIGKILL) };
    assert!(wait_dead(gc).await);

    let mut s = Raw::spawn(&[]);
    s.initialize().await;
    drop(s.stdin.take());
    assert!(wait_exit(&mut s.child).await.success());
}

// ---- --huge-result ----

#[tokio::test]
async fn huge_result_beyond_a_16_mib_line() {
    const BYTES: usize = 17 * 1024 * 1024;
    let mut s = Raw::spawn(&["--huge-result", &BYTES.to_string()]);
    s.initialize().await;
    let r = s.request(1, "tools/list", json!({})).await;
    assert!(r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "huge"));
    let r = s.call(2, "huge", json!({})).await;
    let content = r["content"].as_array().unwrap();
    assert_eq!(content.len(), 1);
    assert_eq!(content[0]["text"].as_str().unwrap().len(), BYTES);
    // Without the flag there is no `huge`.
    let mut s = Raw::spawn(&[]);
    s.initialize().await;
    let r = s
        .request(1, "tools/call", json!({"name": "huge", "arguments": {}}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

// ---- --sse-huge-event ----

/// SSE events (event name, data) from a byte stream.
struct SseReader<S> {
    body: S,
    buf: Vec<u8>,
}

impl<S, B, E> SseReader<S>
where
    S: futures::Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Debug,
{
    async fn next_event(&mut self) -> (String, String) {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let raw: Vec<u8> = self.buf.drain(..end + 2).collect();
                let text = String::from_utf8(raw).unwrap();
                let (mut event, mut data) = (String::new(), Vec::new());
                for line in text.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim_start().to_string();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push(v.strip_prefix(' ').unwrap_or(v).to_string());
                    }
                }
                if event.is_empty() && data.is_empty() {
                    continue; // keep-alive comment
                }
                return (event, data.join("\n"));
            }
            let chunk = tokio::time::timeout(T, self.body.next())
                .await
                .expect("no SSE data in time")
                .expect("SSE stream ended")
                .unwrap();
            self.buf.extend_from_slice(chunk.as_ref());
        }
    }
}

#[tokio::test]
async fn sse_huge_event_right_after_endpoint() {
    const BYTES: usize = 5 * 1024 * 1024;
    let fx = spawn_sse_fixture(&["--sse-huge-event", &BYTES.to_string()])
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let resp = http
        .get(&fx.url)
        .header("Accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success());
    let mut sse = SseReader {
        body: resp.bytes_stream(),
        buf: Vec::new(),
    };
    let (event, endpoint) = sse.next_event().await;
    assert_eq!(event, "endpoint");
    let (event, data) = sse.next_event().await;
    assert_eq!(event, "message");
    assert_eq!(data.len(), BYTES);
    let v: Value = serde_json::from_str(&data).expect("valid JSON-RPC when BYTES allows it");
    assert_eq!(v["method"], "notifications/message");

    // The session still works after it.
    let resp = http
        .post(format!("{}{endpoint}", fx.base_url()))
        .json(&json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 202);
    let (event, data) = sse.next_event().await;
    assert_eq!(event, "message");
    let v: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(v["id"], 1);
    assert!(v["result"]["serverInfo"].is_object(), "{v}");
    drop(sse);
    fx.kill().await.unwrap();
}
