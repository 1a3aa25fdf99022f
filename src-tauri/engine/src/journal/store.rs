//! The journal's SQLite file: schema, opening (and setting a bad file
//! aside), inserting batches, pruning by age and size.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, OpenFlags, Row, TransactionBehavior};

use super::entry::{Entry, Kind, Outcome, Via};

/// The columns of an entry, in the order [`entry_from_row`] reads them.
pub(crate) const COLUMNS: &str = "id, time, via, client, client_version, user_name, profile, \
     server, kind, name, arguments, arguments_cut, arguments_bytes, result, result_cut, \
     result_bytes, duration_us, outcome, error_class, error, findings";

/// Ids only grow (AUTOINCREMENT), so `--follow` and keyset paging by id
/// never see an id twice, even after pruning emptied the table. Every
/// filter of the Activity view has an index; an index on one column also
/// holds the row id, so "newest first" walks it backwards without sorting.
/// The time index also holds what the plots read (server, name, duration,
/// outcome), so they scan it alone and not the rows with their texts
/// (twice as fast over 1,000,000 entries, for 3% more file).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time INTEGER NOT NULL,
    via TEXT NOT NULL,
    client TEXT NOT NULL,
    client_version TEXT,
    user_name TEXT,
    profile TEXT,
    server TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    arguments_cut INTEGER NOT NULL,
    arguments_bytes INTEGER NOT NULL,
    result TEXT NOT NULL,
    result_cut INTEGER NOT NULL,
    result_bytes INTEGER NOT NULL,
    duration_us INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    error_class TEXT,
    error TEXT,
    findings TEXT,
    finding_count INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_time ON calls(time, server, name, duration_us, outcome);
CREATE INDEX IF NOT EXISTS calls_server ON calls(server);
CREATE INDEX IF NOT EXISTS calls_name ON calls(name);
CREATE INDEX IF NOT EXISTS calls_outcome ON calls(outcome);
CREATE INDEX IF NOT EXISTS calls_client ON calls(client);
CREATE INDEX IF NOT EXISTS calls_findings ON calls(finding_count) WHERE finding_count > 0;
";

/// The WAL is cut back to this after a checkpoint (it is otherwise left at
/// its largest size).
const WAL_LIMIT_BYTES: i64 = 8 * 1024 * 1024;

/// Rows deleted per transaction when pruning, so that other writers (the
/// app and `switchboard serve` processes) wait at most a moment.
const PRUNE_CHUNK: i64 = 2_000;

/// Why a database operation failed, as the journal handles it.
pub(crate) enum Trouble {
    /// Not a database, or a damaged one: set aside, start a fresh one.
    Corrupt,
    /// Another process holds the lock past the busy timeout.
    Busy,
    Other,
}

pub(crate) fn trouble(e: &rusqlite::Error) -> Trouble {
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => Trouble::Corrupt,
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Trouble::Busy,
        _ => Trouble::Other,
    }
}

/// Opens (creating it if needed) the journal for writing. Two processes
/// opening a new file at once can find it busy while the other switches it
/// to WAL (SQLite answers that at once, without its busy timeout): tried
/// again until `busy` has passed.
pub(crate) fn open_for_writing(path: &Path, busy: Duration) -> rusqlite::Result<Connection> {
    let deadline = std::time::Instant::now() + busy;
    loop {
        match open_once(path, busy) {
            Err(e)
                if matches!(trouble(&e), Trouble::Busy) && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            r => return r,
        }
    }
}

fn open_once(path: &Path, busy: Duration) -> rusqlite::Result<Connection> {
    // What clients sent and servers answered is the user's own business:
    // readable by the user alone (SQLite gives `-wal` and `-shm` the same
    // mode). An empty file is a new database to SQLite.
    #[cfg(unix)]
    if !path.exists() {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path);
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(busy)?;
    // Takes effect only in a new, empty file (before the first table):
    // freed pages can then be given back to the file system.
    conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
    // WAL: readers (the Activity view, `switchboard activity`) never wait
    // for the writers, and several processes write one file. With WAL,
    // synchronous=NORMAL keeps every committed transaction through a
    // process kill (the WAL is in the OS's hands at commit); only a power
    // loss or OS crash may lose the last ones, never the file's integrity.
    let _mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "journal_size_limit", WAL_LIMIT_BYTES)?;
    conn.execute_batch(&format!("BEGIN IMMEDIATE; {SCHEMA} COMMIT;"))
        .inspect_err(|_| {
            let _ = conn.execute_batch("ROLLBACK");
        })?;
    Ok(conn)
}

/// Opens an existing journal for reading (never creates one). `None` when
/// there is no file yet.
pub(crate) fn open_for_reading(
    path: &Path,
    busy: Duration,
) -> rusqlite::Result<Option<Connection>> {
    if !path.exists() {
        return Ok(None);
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(busy)?;
    Ok(Some(conn))
}

/// Whether the journal's table is there yet (a writer makes it at open).
pub(crate) fn has_table(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'calls'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// Moves a bad journal (and its `-wal` and `-shm`) aside as
/// `journal.db.corrupt-<UTC time>`; never deletes it. Returns the new name.
pub(crate) fn set_aside(path: &Path) -> std::io::Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut aside = path.with_file_name(format!("{name}.corrupt-{stamp}"));
    let mut n = 2;
    while aside.exists() {
        aside = path.with_file_name(format!("{name}.corrupt-{stamp}-{n}"));
        n += 1;
    }
    std::fs::rename(path, &aside)?;
    for suffix in ["-wal", "-shm"] {
        let from = PathBuf::from(format!("{}{suffix}", path.display()));
        if from.exists() {
            let to = PathBuf::from(format!("{}{suffix}", aside.display()));
            std::fs::rename(&from, &to)?;
        }
    }
    Ok(aside)
}

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn uint(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// Inserts entries (already masked and capped) in one transaction.
pub(crate) fn insert(conn: &mut Connection, entries: &[Entry]) -> rusqlite::Result<()> {
    // IMMEDIATE: the write lock is taken (or waited for) at the start, so
    // the busy timeout applies; a deferred transaction could fail at its
    // first insert when another process wrote in between.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    insert_in(&tx, entries)?;
    tx.commit()
}

/// Inserts entries within the caller's transaction; returns how many.
pub(crate) fn insert_in(conn: &Connection, entries: &[Entry]) -> rusqlite::Result<u64> {
    {
        let mut st = conn.prepare_cached(
            "INSERT INTO calls (time, via, client, client_version, user_name, profile, server, \
             kind, name, arguments, arguments_cut, arguments_bytes, result, result_cut, \
             result_bytes, duration_us, outcome, error_class, error, findings, finding_count) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
             ?17, ?18, ?19, ?20, ?21)",
        )?;
        for e in entries {
            let findings = match e.findings.is_empty() {
                true => None,
                false => serde_json::to_string(&e.findings).ok(),
            };
            st.execute(params![
                int(e.time),
                e.via.as_str(),
                e.client,
                e.client_version,
                e.user,
                e.profile,
                e.server,
                e.kind.as_str(),
                e.name,
                e.arguments,
                e.arguments_cut,
                int(e.arguments_bytes),
                e.result,
                e.result_cut,
                int(e.result_bytes),
                int(e.duration_us),
                e.outcome.as_str(),
                e.error_class,
                e.error,
                findings,
                e.findings.len() as i64,
            ])?;
        }
    }
    Ok(entries.len() as u64)
}

/// An entry from a row selected with [`COLUMNS`].
pub(crate) fn entry_from_row(r: &Row<'_>) -> rusqlite::Result<Entry> {
    let findings: Option<String> = r.get(20)?;
    Ok(Entry {
        id: uint(r.get(0)?),
        time: uint(r.get(1)?),
        via: Via::parse(&r.get::<_, String>(2)?).unwrap_or(Via::Http),
        client: r.get(3)?,
        client_version: r.get(4)?,
        user: r.get(5)?,
        profile: r.get(6)?,
        server: r.get(7)?,
        kind: Kind::parse(&r.get::<_, String>(8)?).unwrap_or(Kind::Tool),
        name: r.get(9)?,
        arguments: r.get(10)?,
        arguments_cut: r.get(11)?,
        arguments_bytes: uint(r.get(12)?),
        result: r.get(13)?,
        result_cut: r.get(14)?,
        result_bytes: uint(r.get(15)?),
        duration_us: uint(r.get(16)?),
        outcome: Outcome::parse(&r.get::<_, String>(17)?).unwrap_or(Outcome::ProtocolError),
        error_class: r.get(18)?,
        error: r.get(19)?,
        findings: findings
            .and_then(|f| serde_json::from_str(&f).ok())
            .unwrap_or_default(),
    })
}

/// Bytes the journal's pages hold (the file less its free pages).
pub(crate) fn used_bytes(conn: &Connection) -> rusqlite::Result<u64> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let free: i64 = conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok(uint((pages - free) * size))
}

/// Deletes entries older than `cutoff_ms`, oldest first, in chunks.
pub(crate) fn prune_older(conn: &Connection, cutoff_ms: u64) -> rusqlite::Result<u64> {
    let mut removed = 0;
    loop {
        let n = conn.execute(
            "DELETE FROM calls WHERE id IN \
             (SELECT id FROM calls WHERE time < ?1 ORDER BY time LIMIT ?2)",
            params![int(cutoff_ms), PRUNE_CHUNK],
        )?;
        removed += n as u64;
        if (n as i64) < PRUNE_CHUNK {
            return Ok(removed);
        }
    }
}

/// Deletes the oldest entries until the pages in use are at most `target`
/// bytes, in chunks, estimating rows from their average size.
pub(crate) fn prune_to_size(conn: &Connection, target: u64) -> rusqlite::Result<u64> {
    let mut removed = 0;
    // Each round re-measures; a few rounds reach the target.
    for _ in 0..64 {
        let used = used_bytes(conn)?;
        if used <= target {
            break;
        }
        let rows: i64 = conn.query_row("SELECT count(*) FROM calls", [], |r| r.get(0))?;
        if rows == 0 {
            break;
        }
        let per_row = (used / uint(rows)).max(1);
        let over = used - target;
        let want = i64::try_from(over.div_ceil(per_row)).unwrap_or(i64::MAX);
        let n = conn.execute(
            "DELETE FROM calls WHERE id IN (SELECT id FROM calls ORDER BY id LIMIT ?1)",
            params![want.clamp(1, PRUNE_CHUNK)],
        )?;
        removed += n as u64;
        // Deleted pages go to the free list; give them back to measure anew.
        release(conn)?;
    }
    Ok(removed)
}

/// Gives free pages back to the file system (the file shrinks at the next
/// checkpoint, which this asks for).
pub(crate) fn release(conn: &Connection) -> rusqlite::Result<()> {
    // The pragma frees one page per step: step it to the end.
    let mut st = conn.prepare("PRAGMA incremental_vacuum")?;
    let mut rows = st.query([])?;
    while rows.next()?.is_some() {}
    drop(rows);
    drop(st);
    let _: (i64, i64, i64) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })?;
    Ok(())
}

/// Which file is at `path` (its inode number); `None` when there is none,
/// and off Unix (where an open file cannot be renamed anyway).
pub(crate) fn file_id(path: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| m.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}
