//! Export of the calls a filter matches, as JSON Lines or CSV, streamed:
//! one row at a time from the database to the writer.

use std::io::Write;

use serde::{Deserialize, Serialize};

use super::entry::Entry;
use super::query::{where_of, Filter, Reader};
use super::store;
use super::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "ExportFormat"))]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// One JSON object per line: the entry as queries give it.
    Jsonl,
    /// A header row, then one row per call; findings as a JSON array.
    Csv,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "jsonl" => Some(Format::Jsonl),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }
}

/// One CSV row. `time` is UTC (ISO 8601); `timeMs` the same in ms.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CsvRow<'a> {
    id: u64,
    time: String,
    time_ms: u64,
    via: &'a str,
    client: &'a str,
    client_version: Option<&'a str>,
    user: Option<&'a str>,
    profile: Option<&'a str>,
    server: &'a str,
    kind: &'a str,
    name: &'a str,
    outcome: &'a str,
    duration_us: u64,
    error_class: Option<&'a str>,
    error: Option<&'a str>,
    finding_count: usize,
    findings: String,
    arguments: &'a str,
    arguments_cut: bool,
    arguments_bytes: u64,
    result: &'a str,
    result_cut: bool,
    result_bytes: u64,
}

/// `2025-03-04T14:05:09.123Z`.
fn iso(ms: u64) -> String {
    use chrono::TimeZone;
    match chrono::Utc.timestamp_millis_opt(i64::try_from(ms).unwrap_or(0)) {
        chrono::LocalResult::Single(t) => t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        _ => String::new(),
    }
}

impl<'a> CsvRow<'a> {
    fn of(e: &'a Entry) -> CsvRow<'a> {
        CsvRow {
            id: e.id,
            time: iso(e.time),
            time_ms: e.time,
            via: e.via.as_str(),
            client: &e.client,
            client_version: e.client_version.as_deref(),
            user: e.user.as_deref(),
            profile: e.profile.as_deref(),
            server: &e.server,
            kind: e.kind.as_str(),
            name: &e.name,
            outcome: e.outcome.as_str(),
            duration_us: e.duration_us,
            error_class: e.error_class.as_deref(),
            error: e.error.as_deref(),
            finding_count: e.findings.len(),
            findings: match e.findings.is_empty() {
                true => String::new(),
                false => serde_json::to_string(&e.findings).unwrap_or_default(),
            },
            arguments: &e.arguments,
            arguments_cut: e.arguments_cut,
            arguments_bytes: e.arguments_bytes,
            result: &e.result,
            result_cut: e.result_cut,
            result_bytes: e.result_bytes,
        }
    }
}

impl Reader {
    /// Writes the calls matching `filter` to `out`, oldest first (all of
    /// them unless the filter has a `limit`); returns how many.
    pub fn export(&mut self, filter: &Filter, format: Format, out: &mut dyn Write) -> Result<u64> {
        match format {
            Format::Jsonl => {
                let n = self.each(filter, &mut |e| {
                    serde_json::to_writer(&mut *out, e).map_err(std::io::Error::from)?;
                    out.write_all(b"\n")?;
                    Ok(())
                })?;
                out.flush()?;
                Ok(n)
            }
            Format::Csv => {
                let mut w = csv::WriterBuilder::new()
                    .has_headers(false)
                    .from_writer(out);
                // The header also when nothing matches: the file says what it holds.
                w.write_record(CSV_HEADER)?;
                let n = self.each(filter, &mut |e| Ok(w.serialize(CsvRow::of(e))?))?;
                w.flush()?;
                Ok(n)
            }
        }
    }

    /// Calls `each` with every entry matching `filter`, oldest first, one
    /// row at a time.
    fn each(&mut self, filter: &Filter, each: &mut dyn FnMut(&Entry) -> Result<()>) -> Result<u64> {
        let path = self.path().to_path_buf();
        let db = |source| Error::Db {
            path: path.clone(),
            source,
        };
        let Some(conn) = self.conn()? else {
            return Ok(0);
        };
        let sql = where_of(filter, true);
        let limit = filter
            .limit
            .map_or(String::new(), |n| format!(" LIMIT {n}"));
        let mut st = conn
            .prepare(&format!(
                "SELECT {} FROM calls {} ORDER BY id ASC{limit}",
                store::COLUMNS,
                sql.clause
            ))
            .map_err(db)?;
        let mut rows = st
            .query(rusqlite::params_from_iter(sql.params))
            .map_err(db)?;
        let mut n = 0;
        while let Some(r) = rows.next().map_err(db)? {
            each(&store::entry_from_row(r).map_err(db)?)?;
            n += 1;
        }
        Ok(n)
    }
}

/// The CSV's columns (as [`CsvRow`] names them).
const CSV_HEADER: &[&str] = &[
    "id",
    "time",
    "timeMs",
    "via",
    "client",
    "clientVersion",
    "user",
    "profile",
    "server",
    "kind",
    "name",
    "outcome",
    "durationUs",
    "errorClass",
    "error",
    "findingCount",
    "findings",
    "arguments",
    "argumentsCut",
    "argumentsBytes",
    "result",
    "resultCut",
    "resultBytes",
];

#[cfg(test)]
mod tests {
    #[test]
    fn the_header_names_every_column() {
        let e = super::Entry::new(super::super::Via::App, "s", super::super::Kind::Tool, "t");
        let mut w = csv::Writer::from_writer(vec![]);
        w.serialize(super::CsvRow::of(&e)).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text.lines().next().unwrap(), super::CSV_HEADER.join(","));
    }
}
