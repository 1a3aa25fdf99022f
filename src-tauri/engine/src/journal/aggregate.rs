//! What the Activity view plots: calls and errors per server over time,
//! latency percentiles per server and per tool, the busiest tools. One pass
//! over the matching rows (only the small columns), in the reader.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::query::{where_of, Filter, Reader};
use super::{Error, Result};

/// Bucket sizes to choose from, smallest first (ms).
const BUCKETS_MS: &[u64] = &[
    60_000,      // 1 min
    300_000,     // 5 min
    900_000,     // 15 min
    1_800_000,   // 30 min
    3_600_000,   // 1 h
    10_800_000,  // 3 h
    21_600_000,  // 6 h
    43_200_000,  // 12 h
    86_400_000,  // 1 day
    604_800_000, // 1 week
];

/// At most this many buckets in a series (a plot's width).
const MAX_BUCKETS: u64 = 120;

/// How many tools [`Aggregates::busiest`] lists.
pub const BUSIEST: usize = 10;

/// Calls and errors of one server, one number per bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerSeries {
    pub server: String,
    /// Calls per bucket, `buckets` long.
    pub calls: Vec<u32>,
    /// Calls that did not end `ok`, per bucket.
    pub errors: Vec<u32>,
}

/// Latency percentiles (nearest rank) of a server's or a tool's calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Latency {
    pub server: String,
    /// The tool (resource, prompt); absent for a server's figures.
    pub name: Option<String>,
    pub calls: u64,
    pub errors: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

/// The plots' data for a filter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Aggregates {
    /// The first bucket's start (ms); bucket `i` starts at `start + i × bucketMs`.
    pub start: u64,
    pub bucket_ms: u64,
    pub buckets: u32,
    pub calls: u64,
    pub errors: u64,
    /// Per server, busiest first.
    pub series: Vec<ServerSeries>,
    /// Per server, busiest first.
    pub servers: Vec<Latency>,
    /// Per tool, busiest first.
    pub tools: Vec<Latency>,
    /// The [`BUSIEST`] tools with the most calls.
    pub busiest: Vec<Latency>,
}

/// The bucket size for a range: the smallest that gives at most
/// [`MAX_BUCKETS`] buckets.
pub fn bucket_for(range_ms: u64) -> u64 {
    BUCKETS_MS
        .iter()
        .copied()
        .find(|&b| range_ms.div_ceil(b) <= MAX_BUCKETS)
        .unwrap_or_else(|| range_ms.div_ceil(MAX_BUCKETS).max(1))
}

/// Nearest-rank percentile of sorted values: the smallest value with at
/// least `p` percent of the values at or below it.
pub fn percentile(sorted: &[u64], p: u64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len() as u64).div_ceil(100).max(1);
    sorted[(rank - 1) as usize]
}

#[derive(Default)]
struct Group {
    durations: Vec<u64>,
    errors: u64,
}

impl Group {
    fn latency(mut self, server: &str, name: Option<&str>) -> Latency {
        self.durations.sort_unstable();
        let d = &self.durations;
        Latency {
            server: server.to_string(),
            name: name.map(str::to_string),
            calls: d.len() as u64,
            errors: self.errors,
            p50_us: percentile(d, 50),
            p90_us: percentile(d, 90),
            p99_us: percentile(d, 99),
            max_us: d.last().copied().unwrap_or(0),
        }
    }
}

impl Reader {
    /// The plots' data for the calls matching `filter` (its paging
    /// ignored). The range is `since`..`until`, or the matching calls'
    /// first time..now when they are absent.
    pub fn aggregates(&mut self, filter: &Filter) -> Result<Aggregates> {
        let path = self.path().to_path_buf();
        let db = |source| Error::Db {
            path: path.clone(),
            source,
        };
        let Some(conn) = self.conn()? else {
            return Ok(Aggregates::default());
        };
        let sql = where_of(filter, false);
        let now = crate::events::now_ms();
        let since = match filter.since {
            Some(s) => s,
            None => conn
                .query_row(
                    &format!("SELECT min(time) FROM calls {}", sql.clause),
                    rusqlite::params_from_iter(sql.params.iter()),
                    |r| r.get::<_, Option<i64>>(0),
                )
                .map_err(db)?
                .map_or(now, |t| t.max(0) as u64),
        };
        let until = filter.until.unwrap_or(now).max(since.saturating_add(1));
        let bucket_ms = bucket_for(until - since);
        let start = since - since % bucket_ms;
        let buckets = (until - 1).saturating_sub(start) / bucket_ms + 1;

        let mut st = conn
            .prepare(&format!(
                "SELECT time, server, name, duration_us, outcome != 'ok' FROM calls {}",
                sql.clause
            ))
            .map_err(db)?;
        let mut rows = st
            .query(rusqlite::params_from_iter(sql.params.iter()))
            .map_err(db)?;
        // Servers and tools by index, so a row costs no allocation.
        let mut server_ix: HashMap<String, usize> = HashMap::new();
        let mut servers: Vec<(String, Group, Vec<u32>, Vec<u32>)> = vec![];
        let mut tool_ix: Vec<HashMap<String, usize>> = vec![];
        let mut tools: Vec<(usize, String, Group)> = vec![];
        let (mut calls, mut errors) = (0u64, 0u64);
        while let Some(r) = rows.next().map_err(db)? {
            let time = r.get::<_, i64>(0).map_err(db)?.max(0) as u64;
            let server = r.get_ref(1).map_err(db)?.as_str().unwrap_or_default();
            let name = r.get_ref(2).map_err(db)?.as_str().unwrap_or_default();
            let duration = r.get::<_, i64>(3).map_err(db)?.max(0) as u64;
            let failed = r.get::<_, bool>(4).map_err(db)?;
            let s = match server_ix.get(server) {
                Some(&s) => s,
                None => {
                    server_ix.insert(server.to_string(), servers.len());
                    servers.push((
                        server.to_string(),
                        Group::default(),
                        vec![0; buckets as usize],
                        vec![0; buckets as usize],
                    ));
                    tool_ix.push(HashMap::new());
                    servers.len() - 1
                }
            };
            let t = match tool_ix[s].get(name) {
                Some(&t) => t,
                None => {
                    tool_ix[s].insert(name.to_string(), tools.len());
                    tools.push((s, name.to_string(), Group::default()));
                    tools.len() - 1
                }
            };
            calls += 1;
            errors += u64::from(failed);
            let (_, group, per_bucket, errs) = &mut servers[s];
            group.durations.push(duration);
            group.errors += u64::from(failed);
            if let Some(b) = time
                .checked_sub(start)
                .map(|d| (d / bucket_ms) as usize)
                .filter(|&b| b < per_bucket.len())
            {
                per_bucket[b] += 1;
                errs[b] += u32::from(failed);
            }
            let tool = &mut tools[t].2;
            tool.durations.push(duration);
            tool.errors += u64::from(failed);
        }

        let names: Vec<String> = servers.iter().map(|s| s.0.clone()).collect();
        let mut series = vec![];
        let mut server_latency = vec![];
        for (server, group, per_bucket, errs) in servers {
            server_latency.push(group.latency(&server, None));
            series.push(ServerSeries {
                server,
                calls: per_bucket,
                errors: errs,
            });
        }
        let mut tool_latency: Vec<Latency> = tools
            .into_iter()
            .map(|(s, name, g)| g.latency(&names[s], Some(&name)))
            .collect();
        let busiest_first = |a: &Latency, b: &Latency| {
            b.calls
                .cmp(&a.calls)
                .then_with(|| a.server.cmp(&b.server))
                .then_with(|| a.name.cmp(&b.name))
        };
        server_latency.sort_by(busiest_first);
        tool_latency.sort_by(busiest_first);
        let order: HashMap<&str, usize> = server_latency
            .iter()
            .enumerate()
            .map(|(i, l)| (l.server.as_str(), i))
            .collect();
        series.sort_by_key(|s| order.get(s.server.as_str()).copied());
        let busiest = tool_latency.iter().take(BUSIEST).cloned().collect();
        Ok(Aggregates {
            start,
            bucket_ms,
            buckets: buckets as u32,
            calls,
            errors,
            series,
            servers: server_latency,
            tools: tool_latency,
            busiest,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50), 50);
        assert_eq!(percentile(&v, 90), 90);
        assert_eq!(percentile(&v, 99), 99);
        assert_eq!(percentile(&[7], 99), 7);
        assert_eq!(percentile(&[1, 2, 3, 4], 50), 2);
        assert_eq!(percentile(&[], 50), 0);
    }

    #[test]
    fn buckets_keep_a_plot_under_its_width() {
        assert_eq!(bucket_for(3_600_000), 60_000);
        assert_eq!(bucket_for(86_400_000), 900_000);
        assert_eq!(bucket_for(30 * 86_400_000), 21_600_000);
        let years: u64 = 5 * 365 * 86_400_000;
        assert!(years.div_ceil(bucket_for(years)) <= MAX_BUCKETS);
    }
}
