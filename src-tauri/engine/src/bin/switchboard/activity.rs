//! `switchboard activity`: the calls clients made through the gateway and
//! the app (the call journal), oldest first; `--follow` keeps printing new
//! ones; `activity export` writes them as JSON Lines or CSV. Reads the
//! journal only: it never starts a server or writes an entry.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use switchboard_engine::host::Host;
use switchboard_engine::journal::{self, Entry, Filter, Format, Reader, MAX_PAGE};

#[derive(Args, Clone, Default)]
pub(crate) struct FilterArgs {
    /// Only calls to this server.
    #[arg(long)]
    server: Option<String>,
    /// Only calls of this tool (the server's own name for it; a resource's
    /// URI or a prompt's name for those).
    #[arg(long)]
    tool: Option<String>,
    /// Only calls from this client (the name it gave, e.g. claude-code).
    #[arg(long)]
    client: Option<String>,
    /// Only calls of the last DURATION: 30s, 15m, 2h, 7d, 1w, or 1h30m.
    #[arg(long, value_name = "DURATION")]
    since: Option<String>,
    /// Only calls that did not end well (tool errors, protocol errors, timeouts).
    #[arg(long)]
    errors: bool,
    /// Only calls where the checks on results found something.
    #[arg(long)]
    findings: bool,
    /// Only calls whose tool name, arguments, result or error contain TEXT.
    #[arg(long, value_name = "TEXT")]
    search: Option<String>,
}

#[derive(Subcommand)]
pub(crate) enum ActivityAction {
    /// Write every call that matches (oldest first) as JSON Lines or CSV.
    Export {
        #[arg(long, default_value = "jsonl", value_parser = ["jsonl", "csv"])]
        format: String,
        /// The file to write (default: standard output).
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        filter: FilterArgs,
    },
}

/// What `switchboard activity` was asked for.
pub(crate) struct Activity {
    pub action: Option<ActivityAction>,
    pub filter: FilterArgs,
    pub limit: u32,
    pub json: bool,
    pub follow: bool,
}

/// `30m`, `2h`, `7d`, `1h30m` (s, m, h, d, w).
pub(crate) fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    let bad = || {
        anyhow::anyhow!("--since \"{text}\" is not a duration: give a number and a unit, e.g. 30m, 2h or 7d (units s, m, h, d, w)")
    };
    let mut total: u64 = 0;
    let mut digits = String::new();
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return Err(bad()),
        };
        let n: u64 = digits.parse().map_err(|_| bad())?;
        total = n
            .checked_mul(unit)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(bad)?;
        digits.clear();
    }
    if !digits.is_empty() || total == 0 {
        return Err(bad());
    }
    Ok(Duration::from_secs(total))
}

fn filter_of(a: &FilterArgs) -> anyhow::Result<Filter> {
    let since = match &a.since {
        Some(s) => {
            let d = parse_duration(s)?;
            let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
            Some(switchboard_engine::events::now_ms().saturating_sub(ms))
        }
        None => None,
    };
    Ok(Filter {
        client: a.client.clone(),
        server: a.server.clone(),
        name: a.tool.clone(),
        errors: a.errors,
        findings: a.findings,
        since,
        search: a.search.clone(),
        ..Filter::default()
    })
}

pub(crate) fn run(host: &Host, a: Activity) -> anyhow::Result<()> {
    let path = journal::path(host);
    let mut reader = Reader::open(&path);
    if let Some(ActivityAction::Export {
        format,
        output,
        filter,
    }) = a.action
    {
        let f = filter_of(&filter)?;
        let format = Format::parse(&format).unwrap_or(Format::Jsonl);
        let n = match &output {
            Some(file) => {
                let out = std::fs::File::create(file)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", file.display()))?;
                let mut out = std::io::BufWriter::new(out);
                reader.export(&f, format, &mut out)?
            }
            None => reader.export(&f, format, &mut std::io::stdout().lock())?,
        };
        if let Some(file) = output {
            eprintln!("Wrote {n} calls to {}.", file.display());
        }
        return Ok(());
    }

    let filter = filter_of(&a.filter)?;
    // Everything up to the newest entry now; --follow goes on from there.
    let newest = reader.last_id()?;
    let mut shown = vec![];
    let mut f = Filter {
        before_id: Some(newest + 1),
        ..filter.clone()
    };
    while (shown.len() as u32) < a.limit {
        f.limit = Some((a.limit - shown.len() as u32).min(MAX_PAGE));
        let page = reader.query(&f)?;
        shown.extend(page.entries);
        match page.next_before_id {
            Some(id) => f.before_id = Some(id),
            None => break,
        }
    }
    shown.reverse();
    let mut out = std::io::stdout().lock();
    if !a.json && shown.is_empty() && !a.follow {
        let filtered = filter != Filter::default();
        match (newest, filtered) {
            (0, _) => writeln!(
                out,
                "No calls recorded yet (Switchboard keeps them in {}).",
                path.display()
            )?,
            _ => writeln!(out, "No calls match.")?,
        }
        return Ok(());
    }
    if !a.json {
        writeln!(out, "{}", header())?;
    }
    if print(&mut out, &shown, a.json).is_err() {
        return Ok(()); // the reader went away (`| head`)
    }
    if !a.follow {
        return Ok(());
    }
    let mut last = newest;
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let page = reader.query(&Filter {
            after_id: Some(last),
            limit: Some(MAX_PAGE),
            ..filter.clone()
        })?;
        // Ids grow in the order entries are committed, so none is missed.
        last = page.entries.last().map_or(last, |e| e.id);
        if print(&mut out, &page.entries, a.json).is_err() {
            return Ok(());
        }
    }
}

fn header() -> String {
    format!(
        "{:<19}  {:<14}  {:<16}  {:<32}  {:>9}  {:<13}  FINDINGS",
        "TIME", "WHO", "SERVER", "TOOL", "DURATION", "OUTCOME"
    )
}

fn print(out: &mut impl Write, entries: &[Entry], json: bool) -> std::io::Result<()> {
    for e in entries {
        if json {
            writeln!(out, "{}", serde_json::to_string(e)?)?;
            continue;
        }
        let findings = match e.findings.len() {
            0 => String::new(),
            n => n.to_string(),
        };
        writeln!(
            out,
            "{:<19}  {:<14}  {:<16}  {:<32}  {:>9}  {:<13}  {findings}",
            local(e.time),
            // The signed-in person on a team gateway, else the client.
            short(e.user.as_deref().unwrap_or(&e.client), 14),
            short(&e.server, 16),
            short(&e.name, 32),
            duration(e.duration_us),
            e.outcome.as_str(),
        )?;
    }
    out.flush()
}

/// `text` in at most `max` characters (`…` where it was cut).
fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max - 1).collect();
    s.push('…');
    s
}

/// `850 µs`, `12 ms`, `3.4 ms`, `1.2 s`.
fn duration(us: u64) -> String {
    match us {
        0..=999 => format!("{us} µs"),
        1_000..=9_999 => format!("{:.1} ms", us as f64 / 1000.0),
        10_000..=999_999 => format!("{} ms", us / 1000),
        _ => format!("{:.1} s", us as f64 / 1e6),
    }
}

/// `2025-03-04 15:05:09` in this machine's time zone.
fn local(ms: u64) -> String {
    use chrono::TimeZone;
    match i64::try_from(ms).map(|ms| chrono::Local.timestamp_millis_opt(ms)) {
        Ok(chrono::LocalResult::Single(t)) => t.format("%Y-%m-%d %H:%M:%S").to_string(),
        _ => ms.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_people_write_them() {
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("7d").unwrap(), Duration::from_secs(604_800));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        for bad in ["", "30", "m", "2x", "-1h", "0m"] {
            let e = parse_duration(bad).unwrap_err().to_string();
            assert!(e.contains("e.g. 30m, 2h or 7d"), "{bad}: {e}");
        }
    }

    #[test]
    fn times_and_names_fit_their_columns() {
        assert_eq!(duration(850), "850 µs");
        assert_eq!(duration(3_400), "3.4 ms");
        assert_eq!(duration(12_000), "12 ms");
        assert_eq!(duration(1_200_000), "1.2 s");
        assert_eq!(short("abcdef", 4), "abc…");
        assert_eq!(short("abc", 4), "abc");
    }
}
