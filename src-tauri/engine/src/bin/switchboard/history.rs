//! `switchboard history`: the changes Switchboard made to files, newest first.

use switchboard_engine::writer::history::{History, HistoryEntry, UndoState};

pub(crate) fn print(history: &History, json: bool) -> anyhow::Result<()> {
    let entries = history.list();
    if json {
        let rows: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| {
                let mut v = serde_json::to_value(e).expect("entries serialize");
                v["time"] = utc(e.at).into();
                v["file"] = e.files.first().map(|f| f.path.display().to_string()).into();
                v
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    if entries.is_empty() {
        println!(
            "No changes recorded yet (Switchboard keeps them in {}).",
            history.dir().display()
        );
        return Ok(());
    }
    println!(
        "{:>5}  {:<16}  {:<20}  {:<48}  FILE",
        "ID", "TIME", "SERVER", "CHANGE"
    );
    for e in &entries {
        println!(
            "{:>5}  {:<16}  {:<20}  {:<48}  {}",
            e.id,
            local(e.at),
            e.server.as_deref().unwrap_or("-"),
            with_state(e),
            files(e)
        );
    }
    Ok(())
}

fn with_state(e: &HistoryEntry) -> String {
    match e.state {
        UndoState::Ready => e.summary.clone(),
        UndoState::Changed => format!("{} [file changed since]", e.summary),
        UndoState::Undone => format!("{} [undone]", e.summary),
    }
}

fn files(e: &HistoryEntry) -> String {
    let first = e
        .files
        .first()
        .map(|f| f.path.display().to_string())
        .unwrap_or_default();
    match e.files.len() {
        0 | 1 => first,
        n => format!("{first} (+{} more)", n - 1),
    }
}

/// `2025-03-04T14:05:09Z`.
fn utc(ms: u64) -> String {
    let secs = (ms / 1000) as i64;
    let (y, mo, d) = civil(secs.div_euclid(86_400));
    let t = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}Z",
        t / 3600,
        t % 3600 / 60,
        t % 60
    )
}

/// `2025-03-04 15:05` in this machine's time zone.
pub(crate) fn local(ms: u64) -> String {
    use chrono::TimeZone;
    match i64::try_from(ms).map(|ms| chrono::Local.timestamp_millis_opt(ms)) {
        Ok(chrono::LocalResult::Single(t)) => t.format("%Y-%m-%d %H:%M").to_string(),
        _ => utc(ms).replace('T', " ")[..16].to_string(),
    }
}

/// Year, month, day of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_times() {
        assert_eq!(super::utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::utc(1_709_561_109_000), "2024-03-04T14:05:09Z");
        assert_eq!(super::utc(951_782_400_000), "2000-02-29T00:00:00Z");
    }
}
