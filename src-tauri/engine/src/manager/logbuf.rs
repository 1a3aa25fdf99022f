//! A bounded, per-server log: stderr lines, lifecycle events and the
//! server's own log messages. Old lines fall off the front. `LogSink` puts
//! lines in the buffer at once and publishes them batched (a chatty server
//! costs the UI at most ~20 events a second), with the server's secrets
//! masked; `pump_stderr` reads a child's stderr as bytes, so no byte a
//! server writes can stop the reader.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead};
use tokio::sync::broadcast;

use crate::events::{now_ms, EngineEvent, LogLine};
use crate::redact::Redactor;

pub const DEFAULT_CAPACITY: usize = 2000;
/// Longer lines are cut: a server printing one huge line must not eat memory.
pub const MAX_LINE: usize = 8 * 1024;

/// The next line's [`LogLine::seq`], shared by every server's buffer, so a
/// server whose log is made anew (redefined under the same name) goes on
/// from where the numbers are.
static NEXT_SEQ: AtomicU64 = AtomicU64::new(0);

#[derive(Debug)]
pub struct LogBuffer {
    lines: Mutex<VecDeque<LogLine>>,
    capacity: usize,
    dropped: std::sync::atomic::AtomicU64,
}

impl Default for LogBuffer {
    fn default() -> Self {
        LogBuffer::new(DEFAULT_CAPACITY)
    }
}

impl LogBuffer {
    pub fn new(capacity: usize) -> Self {
        LogBuffer {
            // Grows with use: most servers log a few lines, and two hundred
            // buffers made room for 256 lines each up front (14 KB apiece).
            lines: Mutex::new(VecDeque::new()),
            capacity,
            dropped: Default::default(),
        }
    }

    pub fn push(&self, kind: &str, text: &str) -> LogLine {
        let mut text = text.trim_end_matches(['\r', '\n']).to_string();
        // Room for the cut marker of `pump_stderr`.
        if text.len() > MAX_LINE + 64 {
            let mut cut = MAX_LINE;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push('…');
        }
        let mut l = self.lines.lock().unwrap();
        // Numbered under the buffer's lock: the buffer's order is the numbers' order.
        let line = LogLine {
            seq: NEXT_SEQ.fetch_add(1, Ordering::Relaxed),
            at: now_ms(),
            kind: kind.into(),
            text,
        };
        if l.len() == self.capacity {
            l.pop_front();
            self.dropped
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        l.push_back(line.clone());
        line
    }

    pub fn snapshot(&self) -> Vec<LogLine> {
        self.lines.lock().unwrap().iter().cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.lines.lock().unwrap().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lines that fell off the front since the start.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// How long lines wait to be published together.
pub const BATCH_INTERVAL: Duration = Duration::from_millis(50);

/// One server's log: the bounded buffer, its secrets, and the batched
/// publication of new lines as `EngineEvent::Log`.
pub struct LogSink {
    server: String,
    buf: LogBuffer,
    pub redactor: Arc<Redactor>,
    events: broadcast::Sender<EngineEvent>,
    /// Lines not yet published (at most the buffer's capacity).
    pending: Mutex<Vec<LogLine>>,
    flush_scheduled: AtomicBool,
}

impl LogSink {
    pub fn new(server: &str, events: broadcast::Sender<EngineEvent>) -> Arc<Self> {
        LogSink::with_redactor(server, events, Redactor::default())
    }

    /// A sink whose secrets are `redactor`'s (e.g. one feeding the
    /// manager's redactor of every server's secrets).
    pub fn with_redactor(
        server: &str,
        events: broadcast::Sender<EngineEvent>,
        redactor: Redactor,
    ) -> Arc<Self> {
        Arc::new(LogSink {
            server: server.into(),
            buf: LogBuffer::default(),
            redactor: Arc::new(redactor),
            events,
            pending: Mutex::new(vec![]),
            flush_scheduled: AtomicBool::new(false),
        })
    }

    /// Record a line now; publish it with the others of the next batch.
    pub fn line(self: &Arc<Self>, kind: &str, text: &str) -> LogLine {
        let line = self.keep(kind, text, true);
        if !self.flush_scheduled.swap(true, Ordering::AcqRel) {
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    let me = self.clone();
                    rt.spawn(async move {
                        tokio::time::sleep(BATCH_INTERVAL).await;
                        me.flush();
                    });
                }
                Err(_) => self.flush(),
            }
        }
        line
    }

    /// Record a line and publish it at once (with any lines waiting before
    /// it, in order): lifecycle changes are shown without delay.
    pub fn now(&self, kind: &str, text: &str) -> LogLine {
        let line = self.keep(kind, text, false);
        self.publish();
        line
    }

    /// Masks the line's secrets, keeps it in the buffer and queues it for
    /// publishing, both under the queue's lock: lines are published in the
    /// order of their numbers. With `bounded`, at most a buffer's worth
    /// waits (the oldest waiting line goes); a line published at once is
    /// queued on top, so it never pushes out one of the batch before it.
    fn keep(&self, kind: &str, text: &str, bounded: bool) -> LogLine {
        let text = self.redactor.apply(text);
        let mut p = self.pending.lock().unwrap();
        let line = self.buf.push(kind, &text);
        if bounded && p.len() >= self.buf.capacity {
            p.remove(0);
        }
        p.push(line.clone());
        line
    }

    fn flush(&self) {
        self.flush_scheduled.store(false, Ordering::Release);
        self.publish();
    }

    fn publish(&self) {
        // Sent under the lock (a broadcast send does not wait): two batches
        // taken one after the other go out in that order.
        let mut pending = self.pending.lock().unwrap();
        if !pending.is_empty() {
            let _ = self.events.send(EngineEvent::Log {
                server: self.server.clone(),
                lines: std::mem::take(&mut *pending),
            });
        }
    }

    pub fn snapshot(&self) -> Vec<LogLine> {
        self.buf.snapshot()
    }

    pub fn buffer(&self) -> &LogBuffer {
        &self.buf
    }
}

/// Read a child's stderr until it closes: bytes split on `\n`, each line cut
/// at [`MAX_LINE`] bytes (the rest of it skipped, not buffered, and the cut
/// marked), decoded lossily. Invalid UTF-8 never stops the reader, so the
/// pipe stays open and the server never dies of a closed stderr.
pub async fn pump_stderr(stderr: impl AsyncRead + Unpin, sink: Arc<LogSink>) {
    let mut reader = tokio::io::BufReader::with_capacity(16 * 1024, stderr);
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut skipped: usize = 0;
    loop {
        let chunk = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(c) => c,
        };
        let (used, complete) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, Some(i)),
            None => (chunk.len(), None),
        };
        let body = &chunk[..complete.unwrap_or(used)];
        let room = MAX_LINE.saturating_sub(line.len());
        line.extend_from_slice(&body[..body.len().min(room)]);
        skipped += body.len().saturating_sub(room);
        reader.consume(used);
        if complete.is_some() {
            emit_line(&sink, &line, skipped);
            line.clear();
            skipped = 0;
        }
    }
    if !line.is_empty() {
        emit_line(&sink, &line, skipped);
    }
}

fn emit_line(sink: &Arc<LogSink>, bytes: &[u8], skipped: usize) {
    let text = String::from_utf8_lossy(bytes);
    if skipped == 0 {
        sink.line("stderr", &text);
    } else {
        sink.line(
            "stderr",
            &format!(
                "{}… [line cut: {skipped} more bytes]",
                text.trim_end_matches('\r')
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_lines_up_to_capacity() {
        let b = LogBuffer::new(3);
        for i in 0..5 {
            b.push("stderr", &format!("line {i}\n"));
        }
        let s = b.snapshot();
        assert_eq!(
            s.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(),
            ["line 2", "line 3", "line 4"]
        );
        assert_eq!(b.dropped(), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn lines_are_numbered_in_the_order_they_are_kept_and_published() {
        let (events, mut rx) = broadcast::channel(4096);
        let sink = LogSink::new("s", events.clone());
        // Four writers at once: stderr lines and lifecycle lines.
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let sink = sink.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        if i % 50 == 0 {
                            sink.now("lifecycle", &format!("writer {w} mark {i}"));
                        } else {
                            sink.line("stderr", &format!("writer {w} line {i}"));
                        }
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        let kept: Vec<u64> = sink.snapshot().iter().map(|l| l.seq).collect();
        assert_eq!(kept.len(), 800);
        assert!(
            kept.windows(2).all(|p| p[0] < p[1]),
            "the buffer's lines are not in the order of their numbers"
        );
        let mut published = vec![];
        while published.len() < 800 {
            match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
                Ok(Ok(EngineEvent::Log { lines, .. })) => {
                    published.extend(lines.iter().map(|l| l.seq))
                }
                other => panic!("expected log lines, got {other:?}"),
            }
        }
        assert_eq!(published, kept, "published in another order than kept");
        // A server's log made anew goes on from the numbers already given.
        let again = LogSink::new("s", events);
        let next = again.line("stderr", "after a redefinition");
        assert!(next.seq > *kept.last().unwrap());
    }

    #[test]
    fn cuts_huge_lines_on_a_char_boundary() {
        let b = LogBuffer::new(3);
        let l = b.push("stderr", &"é".repeat(MAX_LINE));
        assert!(l.text.len() <= MAX_LINE + '…'.len_utf8());
    }

    #[tokio::test]
    async fn stderr_reader_survives_invalid_utf8_and_cuts_endless_lines() {
        let (events, mut rx) = broadcast::channel(64);
        let sink = LogSink::new("s", events);
        let mut input = b"bad \xff\xfe bytes\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 1024 * 1024));
        input.extend(b"\nalive 1\nno newline at the end");
        pump_stderr(&input[..], sink.clone()).await;
        let lines: Vec<String> = sink.snapshot().into_iter().map(|l| l.text).collect();
        assert_eq!(
            lines.len(),
            4,
            "{:?}",
            lines
                .iter()
                .map(|l| &l[..l.len().min(40)])
                .collect::<Vec<_>>()
        );
        assert_eq!(lines[0], "bad \u{fffd}\u{fffd} bytes");
        assert!(
            lines[1].len() < MAX_LINE + 64
                && lines[1].ends_with(&format!(
                    "[line cut: {} more bytes]",
                    1024 * 1024 - MAX_LINE
                )),
            "{}",
            &lines[1][MAX_LINE - 10..]
        );
        assert_eq!(&lines[2..], ["alive 1", "no newline at the end"]);
        // Published in batches, not one event per line.
        let mut published = vec![];
        while published.len() < 4 {
            match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
                Ok(Ok(EngineEvent::Log { lines, .. })) => published.extend(lines),
                other => panic!("expected log lines, got {other:?}"),
            }
        }
        assert_eq!(published.len(), 4);
    }

    #[tokio::test]
    async fn many_lines_make_few_events_and_secrets_are_masked() {
        let (events, mut rx) = broadcast::channel(64);
        let sink = LogSink::new("s", events);
        sink.redactor.set(["hunter2-secret".to_string()]);
        for i in 0..1000 {
            sink.line("stderr", &format!("line {i} token=hunter2-secret"));
        }
        let mut got = 0;
        let mut batches = 0;
        while got < 1000 {
            match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
                Ok(Ok(EngineEvent::Log { lines, .. })) => {
                    assert!(lines
                        .iter()
                        .all(|l| !l.text.contains("hunter2") && l.text.contains("•••")));
                    got += lines.len();
                    batches += 1;
                }
                other => panic!("expected log lines, got {other:?}"),
            }
        }
        assert!(
            batches < 10,
            "1000 lines written at once came as {batches} events"
        );
    }
}
