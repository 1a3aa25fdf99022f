//! Figures for the one bench table. Every benchmark (the engine's `cargo
//! bench` binaries and the app's `*.bench.mjs`) records its headline figures
//! here; `.ci/bench` sets `BENCH_OUT` to a file of JSON lines and prints them
//! all as one table (`tests/e2e/lib/bench-table.mjs`). Without `BENCH_OUT`
//! a figure is only printed.

use std::io::Write;
use std::time::Duration;

/// What a figure is judged against.
#[derive(Debug, Clone, Copy)]
pub enum Goal {
    /// Reported, not judged.
    None,
    /// The median must be at most this.
    Max(f64),
    /// The 90th percentile must be at most this.
    MaxP90(f64),
    /// The median must be at least this.
    Min(f64),
}

/// One row: `group` (Engine, Writer, …), what was measured, its median and
/// 90th percentile in `unit`, the goal, and a note (runs, sizes).
pub fn record(
    group: &str,
    figure: &str,
    median: f64,
    p90: Option<f64>,
    unit: &str,
    goal: Goal,
    note: &str,
) {
    let (goal_json, pass) = match goal {
        Goal::None => (serde_json::Value::Null, None),
        Goal::Max(max) => (serde_json::json!({ "max": max }), Some(median <= max)),
        Goal::MaxP90(max) => (
            serde_json::json!({ "max": max, "on": "p90" }),
            Some(p90.unwrap_or(median) <= max),
        ),
        Goal::Min(min) => (serde_json::json!({ "min": min }), Some(median >= min)),
    };
    let row = serde_json::json!({
        "group": group, "figure": figure, "median": median, "p90": p90, "unit": unit,
        "goal": goal_json, "pass": pass, "note": note,
    });
    println!(
        "bench | {group} | {figure} | {median:.3} | {} | {unit} | {goal:?}",
        p90.map(|p| format!("{p:.3}")).unwrap_or_default()
    );
    if let Some(path) = std::env::var_os("BENCH_OUT") {
        let line = format!("{row}\n");
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            panic!(
                "cannot append to BENCH_OUT {}: {e}",
                std::path::Path::new(&path).display()
            );
        }
    }
}

/// The median and 90th percentile of `samples`, in milliseconds.
pub fn ms_stats(samples: &[Duration]) -> (f64, f64) {
    let mut s: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    s.sort_by(f64::total_cmp);
    let at = |p: f64| s[(((s.len() - 1) as f64) * p).round() as usize];
    (at(0.5), at(0.9))
}

/// A process's resident memory and its peak, in KiB (`VmRSS`, `VmHWM` of
/// `/proc/PID/status`; 0 where the system has no such file).
pub fn rss_kb(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |k: &str| {
        status
            .lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
