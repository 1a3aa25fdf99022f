//! Reading the journal: filters, pages newest first (keyset by id), counts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::types::Value;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use super::entry::{Entry, Kind, Outcome};
use super::store;
use super::{Error, Result};

/// A page holds at most this many entries.
pub const MAX_PAGE: u32 = 1_000;

/// Entries per page when the filter names no limit.
pub const DEFAULT_PAGE: u32 = 100;

/// Which calls to show. Every field narrows; the default is everything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct Filter {
    /// The client's name as its `initialize` gave it.
    pub client: Option<String>,
    pub server: Option<String>,
    /// The tool's name, resource URI or prompt name (exactly).
    pub name: Option<String>,
    pub kind: Option<Kind>,
    /// Only these outcomes (empty: any).
    pub outcomes: Vec<Outcome>,
    /// Only calls that did not end `ok`.
    pub errors: bool,
    /// Only calls with a finding.
    pub findings: bool,
    /// From this time on (ms since the epoch, inclusive).
    pub since: Option<u64>,
    /// Before this time (ms, exclusive).
    pub until: Option<u64>,
    /// Text in the name, arguments, result or error (case-insensitive for ASCII).
    pub search: Option<String>,
    /// Paging newest first: entries older than this id (the previous
    /// page's `nextBeforeId`).
    pub before_id: Option<u64>,
    /// Following: entries newer than this id, oldest first.
    pub after_id: Option<u64>,
    /// Entries per page ([`DEFAULT_PAGE`] when absent, at most [`MAX_PAGE`]).
    pub limit: Option<u32>,
}

/// One page of entries: newest first, or oldest first with `afterId`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Page {
    pub entries: Vec<Entry>,
    /// The `beforeId` of the next (older) page, when there may be one.
    pub next_before_id: Option<u64>,
}

/// A filter as SQL: the `WHERE` clause (or empty) and its parameters.
pub(crate) struct Sql {
    pub clause: String,
    pub params: Vec<Value>,
}

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The `WHERE` of a filter; `paging` adds its ids.
pub(crate) fn where_of(f: &Filter, paging: bool) -> Sql {
    let mut parts: Vec<String> = vec![];
    let mut params: Vec<Value> = vec![];
    let mut eq = |col: &str, v: &Option<String>, parts: &mut Vec<String>| {
        if let Some(v) = v {
            params.push(Value::Text(v.clone()));
            parts.push(format!("{col} = ?{}", params.len()));
        }
    };
    eq("client", &f.client, &mut parts);
    eq("server", &f.server, &mut parts);
    eq("name", &f.name, &mut parts);
    let kind = f.kind.map(|k| k.as_str().to_string());
    eq("kind", &kind, &mut parts);
    if !f.outcomes.is_empty() {
        let list: Vec<String> = f
            .outcomes
            .iter()
            .map(|o| format!("'{}'", o.as_str()))
            .collect();
        parts.push(format!("outcome IN ({})", list.join(", ")));
    }
    if f.errors {
        parts.push("outcome != 'ok'".into());
    }
    if f.findings {
        parts.push("finding_count > 0".into());
    }
    let mut num = |cond: &str, v: Option<u64>, parts: &mut Vec<String>| {
        if let Some(v) = v {
            params.push(Value::Integer(int(v)));
            parts.push(format!("{cond} ?{}", params.len()));
        }
    };
    num("time >=", f.since, &mut parts);
    num("time <", f.until, &mut parts);
    if paging {
        num("id <", f.before_id, &mut parts);
        num("id >", f.after_id, &mut parts);
    }
    if let Some(s) = f.search.as_deref().filter(|s| !s.is_empty()) {
        let escaped = s
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        params.push(Value::Text(format!("%{escaped}%")));
        let n = params.len();
        parts.push(format!(
            "(name LIKE ?{n} ESCAPE '\\' OR arguments LIKE ?{n} ESCAPE '\\' \
             OR result LIKE ?{n} ESCAPE '\\' OR error LIKE ?{n} ESCAPE '\\')"
        ));
    }
    Sql {
        clause: match parts.is_empty() {
            true => String::new(),
            false => format!("WHERE {}", parts.join(" AND ")),
        },
        params,
    }
}

/// Reads one journal file. Opens it at the first query and keeps the
/// connection; a journal that does not exist yet reads as empty.
pub struct Reader {
    path: PathBuf,
    conn: Option<Connection>,
    /// The file the connection has open (`store::file_id`): when another
    /// one is at the path (the old one was set aside), it is opened.
    opened: Option<u64>,
}

/// How long a read waits for a writer's lock (WAL readers rarely wait).
const READ_BUSY: Duration = Duration::from_secs(5);

impl Reader {
    pub fn open(path: impl Into<PathBuf>) -> Reader {
        Reader {
            path: path.into(),
            conn: None,
            opened: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Drops the connection: the next query opens the file again (after
    /// a bad file was set aside and a fresh one started).
    pub(crate) fn reopen(&mut self) {
        self.conn = None;
    }

    fn db_error(&self, source: rusqlite::Error) -> Error {
        Error::Db {
            path: self.path.clone(),
            source,
        }
    }

    /// The connection, or `None` while there is no journal (or no table).
    pub(crate) fn conn(&mut self) -> Result<Option<&Connection>> {
        if self.conn.is_some() && cfg!(unix) && store::file_id(&self.path) != self.opened {
            self.conn = None;
        }
        if self.conn.is_none() {
            match store::open_for_reading(&self.path, READ_BUSY) {
                Ok(c) => {
                    self.conn = c;
                    self.opened = store::file_id(&self.path);
                }
                Err(e) => return Err(self.db_error(e)),
            }
        }
        let Some(conn) = self.conn.as_ref() else {
            return Ok(None);
        };
        match store::has_table(conn) {
            Ok(true) => Ok(self.conn.as_ref()),
            Ok(false) => Ok(None),
            Err(e) => {
                self.conn = None;
                Err(self.db_error(e))
            }
        }
    }

    /// The entries matching `filter`, newest first (oldest first after
    /// `afterId`), one page of at most `limit`.
    pub fn query(&mut self, filter: &Filter) -> Result<Page> {
        let path = self.path.clone();
        let Some(conn) = self.conn()? else {
            return Ok(Page::default());
        };
        let limit = filter.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
        let ascending = filter.after_id.is_some() && filter.before_id.is_none();
        let sql = where_of(filter, true);
        let text = format!(
            "SELECT {} FROM calls {} ORDER BY id {} LIMIT {limit}",
            store::COLUMNS,
            sql.clause,
            if ascending { "ASC" } else { "DESC" }
        );
        let db = |source| Error::Db {
            path: path.clone(),
            source,
        };
        let mut st = conn.prepare_cached(&text).map_err(db)?;
        let entries = st
            .query_map(
                rusqlite::params_from_iter(sql.params),
                store::entry_from_row,
            )
            .map_err(db)?
            .collect::<rusqlite::Result<Vec<Entry>>>()
            .map_err(db)?;
        let next_before_id = match (ascending, entries.len() as u32 == limit) {
            (false, true) => entries.last().map(|e| e.id),
            _ => None,
        };
        Ok(Page {
            entries,
            next_before_id,
        })
    }

    /// How many entries match `filter` (its paging ignored).
    pub fn count(&mut self, filter: &Filter) -> Result<u64> {
        let path = self.path.clone();
        let Some(conn) = self.conn()? else {
            return Ok(0);
        };
        let sql = where_of(filter, false);
        conn.query_row(
            &format!("SELECT count(*) FROM calls {}", sql.clause),
            rusqlite::params_from_iter(sql.params),
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n.max(0) as u64)
        .map_err(|source| Error::Db { path, source })
    }

    /// The newest entry's id (0 when empty): where `--follow` starts.
    pub fn last_id(&mut self) -> Result<u64> {
        let path = self.path.clone();
        let Some(conn) = self.conn()? else {
            return Ok(0);
        };
        conn.query_row("SELECT coalesce(max(id), 0) FROM calls", [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n.max(0) as u64)
        .map_err(|source| Error::Db { path, source })
    }
}
