//! The call journal at scale: `cargo bench --bench journal`.
//!
//! 1. 1,000,000 entries over 29 days (20 servers × 8 tools, 5 clients,
//!    arguments ~100–200 B, results mostly ~200–600 B and 2% of 4 KB, 6%
//!    errors, 1% with a finding), written in one transaction.
//! 2. A filtered query (server + errors + last 7 days, first page of 100):
//!    goal ≤ 100 ms.
//! 3. The Activity view's first screen (newest 100, their count, and the
//!    plots' aggregates over the last 24 hours): goal ≤ 300 ms.
//! 4. What a gateway call pays: `record()` alone, and building the entry
//!    (capping its arguments and result) plus `record()`, at the median:
//!    goal ≤ 20 µs for the whole journal overhead per call.
//! 5. 5,000 calls in a burst: the longest any `record()` took.
//!
//! Also reported: the plots over 7 and 29 days, and a search for a rare word.
//!
//! `BENCH_JOURNAL_ROWS` sets another size for step 1 (a quick run).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_engine::journal::{
    bulk_insert, Entry, Filter, Journal, JournalSettings, Kind, Outcome, Reader, Via,
};
use switchboard_engine::redact::Redactor;
use switchboard_engine::tool_trust::scan::{Finding, Severity};
use switchboard_tests::bench::{ms_stats, record, Goal};

const DAY: u64 = 86_400_000;
const RUNS: usize = 15;

/// A small deterministic generator (no dependency, same data each run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn words(rng: &mut Lcg, bytes: usize) -> String {
    const W: &[&str] = &[
        "issue",
        "file",
        "the",
        "repository",
        "result",
        "line",
        "created",
        "user",
        "open",
        "branch",
        "commit",
        "status",
        "error",
        "found",
        "matches",
        "query",
        "page",
        "title",
    ];
    let mut s = String::with_capacity(bytes + 16);
    while s.len() < bytes {
        s.push_str(W[rng.below(W.len() as u64) as usize]);
        s.push(' ');
    }
    s
}

fn entry(rng: &mut Lcg, i: u64, n: u64, now: u64) -> Entry {
    let server = rng.below(20);
    let tool = rng.below(8);
    let client = ["claude-code", "cursor", "codex", "vscode", "gemini-cli"][rng.below(5) as usize];
    let query = 40 + rng.below(100) as usize;
    // One entry in 10,000 carries the word the search looks for.
    let marker = if i % 10_000 == 5_000 {
        "zebra-marker "
    } else {
        ""
    };
    let args = json!({
        "query": format!("{marker}{}", words(rng, query)),
        "limit": rng.below(100),
        "path": format!("/home/me/project/src/file_{}.rs", rng.below(1000)),
    });
    let size = if rng.below(50) == 0 {
        4096
    } else {
        200 + rng.below(400) as usize
    };
    let result = json!({"content": [{"type": "text", "text": words(rng, size)}]});
    let mut e = Entry::new(
        Via::Http,
        format!("server-{server}"),
        Kind::Tool,
        format!("tool_{tool}"),
    )
    .with_client(client, Some("1.0.0".into()))
    .with_arguments(&args)
    .with_result(&result)
    .with_duration(Duration::from_micros(
        500 + rng.below(20_000) + server * 1000,
    ));
    if rng.below(100) < 6 {
        let outcome =
            [Outcome::ToolError, Outcome::ProtocolError, Outcome::Timeout][rng.below(3) as usize];
        e = e.with_error(outcome, Some("server".into()), "the server said no");
    }
    if rng.below(100) == 0 {
        e = e.with_findings(vec![Finding {
            rule: "instructions".into(),
            severity: Severity::High,
            message: "The result tells the model to ignore previous instructions.".into(),
            at: "content[0].text".into(),
            visible: None,
        }]);
    }
    // Spread evenly over 29 days, oldest first.
    e.time = now - 29 * DAY + i * (29 * DAY / n);
    e
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn us_stats(samples: &mut [Duration]) -> (f64, f64, f64, f64) {
    samples.sort();
    let at = |p: f64| us(samples[(((samples.len() - 1) as f64) * p).round() as usize]);
    (at(0.5), at(0.9), at(0.99), us(*samples.last().unwrap()))
}

fn main() {
    let rows: u64 = std::env::var("BENCH_JOURNAL_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.db");
    let now = switchboard_engine::events::now_ms();

    // 1. Fill.
    let mut rng = Lcg(7);
    let t = Instant::now();
    let n = bulk_insert(
        &path,
        (0..rows).map(|i| entry(&mut rng, i, rows, now)),
        &Redactor::default(),
    )
    .unwrap();
    let fill = t.elapsed();
    assert_eq!(n, rows);
    let mb = std::fs::metadata(&path).unwrap().len() as f64 / 1048576.0;
    println!("{rows} entries written in {fill:?}; the file is {mb:.0} MB");
    record(
        "Journal",
        &format!("Write {rows} entries in one transaction (masked)"),
        fill.as_secs_f64(),
        None,
        "s",
        Goal::None,
        &format!(
            "{mb:.0} MB file, {:.1} µs per entry",
            us(fill) / rows as f64
        ),
    );

    // 2. A filtered query.
    let mut reader = Reader::open(&path);
    let mut times = vec![];
    for run in 0..RUNS {
        let f = Filter {
            server: Some(format!("server-{}", run % 20)),
            errors: true,
            since: Some(now - 7 * DAY),
            limit: Some(100),
            ..Filter::default()
        };
        let t = Instant::now();
        let page = reader.query(&f).unwrap();
        times.push(t.elapsed());
        assert!(!page.entries.is_empty());
    }
    let (median, p90) = ms_stats(&times);
    record(
        "Journal",
        &format!("Filtered query over {rows} entries (server + errors + 7 days, first 100)"),
        median,
        Some(p90),
        "ms",
        Goal::Max(100.0),
        &format!("{RUNS} runs, a different server each"),
    );

    // 3. The first screen: newest 100, count, aggregates of the last day.
    let mut times = vec![];
    let mut agg_times = vec![];
    for _ in 0..RUNS {
        let t = Instant::now();
        let page = reader.query(&Filter::default()).unwrap();
        let count = reader.count(&Filter::default()).unwrap();
        let ta = Instant::now();
        let a = reader
            .aggregates(&Filter {
                since: Some(now - DAY),
                ..Filter::default()
            })
            .unwrap();
        agg_times.push(ta.elapsed());
        times.push(t.elapsed());
        assert_eq!(page.entries.len(), 100);
        assert_eq!(count, rows);
        assert!(a.calls > 0 && a.servers.len() == 20);
    }
    let (median, p90) = ms_stats(&times);
    let (agg, _) = ms_stats(&agg_times);
    record(
        "Journal",
        &format!("Activity's first screen over {rows} entries (newest 100 + count + 24 h plots)"),
        median,
        Some(p90),
        "ms",
        Goal::Max(300.0),
        &format!("{RUNS} runs; the aggregates alone {agg:.0} ms"),
    );
    // Search: LIKE over name, arguments, result and error of every row
    // (the matches are few, so the whole journal is read).
    let t = Instant::now();
    let found = reader
        .query(&Filter {
            search: Some("zebra-marker".into()),
            ..Filter::default()
        })
        .unwrap();
    let took = t.elapsed();
    assert_eq!(found.entries.len() as u64, (rows / 10_000).min(100));
    record(
        "Journal",
        &format!("Search for a word in 1 of 10,000 of {rows} entries (first 100)"),
        took.as_secs_f64() * 1000.0,
        None,
        "ms",
        Goal::None,
        "one run; a scan of every row's texts (LIKE, no full-text index)",
    );
    for days in [7, 29] {
        let t = Instant::now();
        let a = reader
            .aggregates(&Filter {
                since: Some(now - days * DAY),
                ..Filter::default()
            })
            .unwrap();
        let took = t.elapsed();
        record(
            "Journal",
            &format!("Activity's plots over {days} days ({} calls)", a.calls),
            took.as_secs_f64() * 1000.0,
            None,
            "ms",
            Goal::None,
            "one run: calls and errors per server over time, percentiles per server and tool",
        );
    }
    drop(reader);

    // 4. What a call pays.
    let path2 = dir.path().join("record.db");
    let redactor = Arc::new(Redactor::default());
    redactor.set(["a-known-secret-value".to_string()]);
    let j = Journal::open(&path2, JournalSettings::default(), redactor);
    let mut rng = Lcg(11);
    let mut only_record = vec![];
    let mut with_entry = vec![];
    for _ in 0..100 {
        for _ in 0..100 {
            // As the gateway would: build from the request and the result.
            let args = json!({"query": words(&mut rng, 120), "limit": 10});
            let result = json!({"content": [{"type": "text", "text": words(&mut rng, 500)}]});
            let t = Instant::now();
            let e = Entry::new(Via::Http, "server-1", Kind::Tool, "tool_1")
                .with_client("claude-code", Some("1.0.0".into()))
                .with_arguments(&args)
                .with_result(&result)
                .with_duration(Duration::from_micros(900));
            let r = Instant::now();
            j.record(e);
            only_record.push(r.elapsed());
            with_entry.push(t.elapsed());
        }
        j.flush();
    }
    assert_eq!(j.stats().dropped, 0);
    let (rec, rec90, _, _) = us_stats(&mut only_record);
    let (all, all90, _, _) = us_stats(&mut with_entry);
    record(
        "Journal",
        "record() per call",
        rec,
        Some(rec90),
        "µs",
        Goal::Max(5.0),
        "10,000 calls; a non-blocking queue push",
    );
    record(
        "Journal",
        "Journal overhead per call: build the entry (cap arguments and result) + record()",
        all,
        Some(all90),
        "µs",
        Goal::Max(20.0),
        "10,000 calls, ~150 B of arguments and ~500 B of result each",
    );

    // 5. A burst.
    let path3 = dir.path().join("burst.db");
    let j = Journal::open(
        &path3,
        JournalSettings::default(),
        Arc::new(Redactor::default()),
    );
    let mut rng = Lcg(13);
    let entries: Vec<Entry> = (0..5000).map(|i| entry(&mut rng, i, 5000, now)).collect();
    let mut times = vec![];
    for e in entries {
        let t = Instant::now();
        j.record(e);
        times.push(t.elapsed());
    }
    j.flush();
    let s = j.stats();
    let (median, _, p99, max) = us_stats(&mut times);
    println!(
        "burst: median {median:.1} µs, p99 {p99:.1} µs, max {max:.1} µs; {} written, {} dropped",
        s.written, s.dropped
    );
    record(
        "Journal",
        "5,000 calls in a burst: the longest record()",
        max,
        Some(p99),
        "µs",
        Goal::Max(1000.0),
        &format!(
            "median {median:.1} µs, p99 {p99:.1} µs; {} written, {} dropped",
            s.written, s.dropped
        ),
    );
}
