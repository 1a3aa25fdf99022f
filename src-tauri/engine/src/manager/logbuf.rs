//! A bounded, per-server log: stderr lines, lifecycle events and the
//! server's own log messages. Old lines fall off the front.

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::events::{now_ms, LogLine};

pub const DEFAULT_CAPACITY: usize = 2000;
/// Longer lines are cut: a server printing one huge line must not eat memory.
pub const MAX_LINE: usize = 8 * 1024;

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
        LogBuffer { lines: Mutex::new(VecDeque::with_capacity(capacity.min(256))), capacity, dropped: Default::default() }
    }

    pub fn push(&self, kind: &str, text: &str) -> LogLine {
        let mut text = text.trim_end_matches(['\r', '\n']).to_string();
        if text.len() > MAX_LINE {
            let mut cut = MAX_LINE;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push('…');
        }
        let line = LogLine { at: now_ms(), kind: kind.into(), text };
        let mut l = self.lines.lock().unwrap();
        if l.len() == self.capacity {
            l.pop_front();
            self.dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
        assert_eq!(s.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(), ["line 2", "line 3", "line 4"]);
        assert_eq!(b.dropped(), 2);
    }

    #[test]
    fn cuts_huge_lines_on_a_char_boundary() {
        let b = LogBuffer::new(3);
        let l = b.push("stderr", &"é".repeat(MAX_LINE));
        assert!(l.text.len() <= MAX_LINE + '…'.len_utf8());
    }
}
