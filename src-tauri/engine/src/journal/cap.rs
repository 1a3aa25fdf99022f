//! Capping what is recorded: any value is serialized once, counting its
//! full size, while only its first bytes are kept, so a result of hundreds
//! of MB costs the time to serialize it but never its memory.

use std::io;

use serde::Serialize;

/// How much of a call's arguments and of its result the journal keeps.
pub const CAP_BYTES: usize = 16 * 1024;

/// How much of an error message the journal keeps.
pub const ERROR_BYTES: usize = 4 * 1024;

/// Kept beyond the cap when a value is cut, for masking only: a secret
/// that straddles the cut is still seen whole (and masked) before the
/// journal cuts the masked text at the cap. Longer than any credential
/// the masking knows (a 4096-bit PEM key is ~3.2 KB).
pub const TAIL_BYTES: usize = 4 * 1024;

/// The first bytes of a value's JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    /// All of the JSON text when it fits the cap; else its first
    /// `cap + TAIL_BYTES` bytes (cut on a character boundary), which the
    /// journal masks and then cuts at the cap.
    pub text: String,
    /// Whether the text was longer than the cap.
    pub cut: bool,
    /// The size of the whole JSON text in bytes.
    pub full_bytes: u64,
}

impl Capped {
    /// Whether `text` stops before the end of the value (it holds the tail).
    pub fn is_partial(&self) -> bool {
        (self.text.len() as u64) < self.full_bytes
    }
}

/// [`cap_json_at`] with [`CAP_BYTES`].
pub fn cap_json(value: &impl Serialize) -> Capped {
    cap_json_at(value, CAP_BYTES)
}

/// Serializes `value` as JSON keeping at most `cap` bytes (plus the
/// masking tail when it is longer), counting the full size. A value that
/// fails to serialize keeps what was written before the failure, marked cut.
pub fn cap_json_at(value: &impl Serialize, cap: usize) -> Capped {
    let mut w = Keep {
        kept: Vec::with_capacity(64),
        keep: cap.saturating_add(TAIL_BYTES),
        total: 0,
    };
    let failed = serde_json::to_writer(&mut w, value).is_err();
    let text = utf8_prefix(w.kept);
    Capped {
        cut: failed || w.total > cap as u64,
        full_bytes: w.total,
        text,
    }
}

/// Keeps the first `keep` bytes written, counts them all.
struct Keep {
    kept: Vec<u8>,
    keep: usize,
    total: u64,
}

impl io::Write for Keep {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.total += buf.len() as u64;
        let room = self.keep.saturating_sub(self.kept.len());
        if room > 0 {
            self.kept.extend_from_slice(&buf[..room.min(buf.len())]);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The bytes as text, without a character cut in two at the end.
fn utf8_prefix(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).unwrap_or_default()
        }
    }
}

/// `text` cut to at most `max` bytes on a character boundary.
pub(crate) fn cut_at_char(text: &mut String, max: usize) {
    if text.len() > max {
        let mut at = max;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_kept_whole() {
        let c = cap_json(&serde_json::json!({"a": [1, 2, 3]}));
        assert_eq!(c.text, r#"{"a":[1,2,3]}"#);
        assert!(!c.cut && !c.is_partial());
        assert_eq!(c.full_bytes, c.text.len() as u64);
    }

    #[test]
    fn long_values_keep_the_cap_and_the_tail_and_count_everything() {
        let s = "é".repeat(20_000); // 40,000 bytes + 2 quotes
        let c = cap_json_at(&s, 1000);
        assert!(c.cut && c.is_partial());
        assert_eq!(c.full_bytes, 40_002);
        assert!(c.text.len() <= 1000 + TAIL_BYTES);
        assert!(
            c.text.len() >= 1000 + TAIL_BYTES - 1,
            "cut on a char boundary"
        );
        // Between the cap and cap + tail: whole, but over the cap.
        let c = cap_json_at(&"x".repeat(1500), 1000);
        assert!(c.cut && !c.is_partial());
    }

    #[test]
    fn cut_at_char_never_splits_a_character() {
        let mut s = "aé".repeat(10);
        cut_at_char(&mut s, 4);
        assert_eq!(s, "aéa");
    }
}
