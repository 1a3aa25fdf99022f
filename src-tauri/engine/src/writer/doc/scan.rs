//! One quick pass over JSON or JSONC text: it checks the syntax and finds
//! where given values are, without building a tree of the whole document.
//!
//! A heavy Claude Code user's `~/.claude.json` is several MB, nearly all of
//! it per-project history Switchboard never looks at. Reading or editing the
//! `mcpServers` in it should cost what those few KB cost, plus one pass over
//! the bytes; this module is that pass. The values it finds are then read or
//! edited by the usual parsers, on their own text.
//!
//! It accepts less than `jsonc_parser` does: RFC 8259 JSON, plus (for
//! JSONC) `//` and `/* */` comments and trailing commas. Whatever it does not
//! accept (a syntax error, but also a lone `\r` line end, a surrogate
//! `\u` escape, very deep nesting, or a key the walk depends on that appears
//! twice) is `Unsure`, and the caller takes the full parser's way, which
//! says what is wrong where. Text it accepts, `jsonc_parser` accepts too
//! (the `scan_accepts_only_what_the_parser_accepts` proptest holds it to that).

use std::borrow::Cow;
use std::ops::Range;

use super::PathSeg;

/// The scan cannot vouch for the text; use the full parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsure;

type R<T> = std::result::Result<T, Unsure>;

/// Deeper than this, a scan gives up rather than risk the stack.
const MAX_DEPTH: usize = 200;

/// A value found by `locate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The value's bytes.
    pub value: Range<usize>,
    /// Where each key of the path starts (its opening quote); an array index
    /// has the offset of the element.
    pub keys: Vec<usize>,
}

/// Check `text` and find the value at each of `wanted` (`None`: not in the
/// document). A key that leads to a wanted value and appears twice in its
/// object is `Unsure`: readers disagree on which copy counts.
pub fn locate(text: &str, jsonc: bool, wanted: &[&[PathSeg]]) -> R<Vec<Option<Found>>> {
    locate_in(&mut Scanner::new(text, jsonc), wanted)
}

/// `locate` that stops once every wanted value is found: for text known to
/// parse (just checked, or just written), where the rest need not be read.
pub fn locate_first(text: &str, jsonc: bool, wanted: &[&[PathSeg]]) -> R<Vec<Option<Found>>> {
    let mut s = Scanner::new(text, jsonc);
    s.stop_after = Some(wanted.len());
    locate_in(&mut s, wanted)
}

/// `locate`, and in the same pass the skeleton around `wanted[around]` (see
/// `skeleton`), for a file read to be edited there: its edit then needs no
/// second pass. The skeleton is `None` where `skeleton` would be unsure.
pub fn locate_around(
    text: &str,
    jsonc: bool,
    wanted: &[&[PathSeg]],
    around: usize,
) -> R<(Vec<Option<Found>>, Option<Skeleton>)> {
    let path = wanted.get(around).ok_or(Unsure)?;
    let mut s = Scanner::new(text, jsonc);
    s.around = Some((around, Walk::new(path.len())));
    let found = locate_in(&mut s, wanted)?;
    let skeleton = s
        .around
        .take()
        .and_then(|(_, walk)| walk.skeleton(text, path.len()).ok());
    Ok((found, skeleton))
}

fn locate_in(s: &mut Scanner, wanted: &[&[PathSeg]]) -> R<Vec<Option<Found>>> {
    let mut out = vec![None; wanted.len()];
    let all: Vec<usize> = (0..wanted.len()).collect();
    let mut keys = vec![];
    match s.document(|s| s.find(wanted, &all, &mut keys, &mut out)) {
        Ok(()) => Ok(out),
        Err(_) if s.stop_after == Some(0) => Ok(out),
        Err(e) => Err(e),
    }
}

/// Check `text` (a whole document) without finding anything.
pub fn check(text: &str, jsonc: bool) -> R<()> {
    Scanner::new(text, jsonc).document(Scanner::skip_value)
}

/// The document with the large values that are neither on `path` nor inside
/// its deepest existing container replaced by `{}` or `[]`: every object the
/// path goes through keeps its members, their order and their layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skeleton {
    pub text: String,
    /// The deepest object or array on `path` that exists (the root does not
    /// count): its bytes in the
    /// original text and in `text` (the same bytes).
    pub kept: Range<usize>,
    pub kept_in_skeleton: Range<usize>,
    /// How many segments of `path` lead to it.
    pub depth: usize,
}

/// The skeleton of `text` around `path`; `Unsure` also when the deepest
/// existing object or array on the path is the root.
pub fn skeleton(text: &str, jsonc: bool, path: &[PathSeg]) -> R<Skeleton> {
    locate_around(text, jsonc, &[path], 0)?.1.ok_or(Unsure)
}

/// Every string value that `is_secret` says is one: `inside` is whether a
/// key above it made everything below secret (`container(key)`), `key` the
/// member name it is the value of, if any.
pub fn secret_strings(
    text: &str,
    jsonc: bool,
    container: &dyn Fn(&str) -> bool,
    is_secret: &dyn Fn(bool, Option<&str>) -> bool,
) -> R<Vec<String>> {
    let mut s = Scanner::new(text, jsonc);
    let mut out = vec![];
    s.document(|s| s.secrets(false, None, container, is_secret, &mut out))?;
    Ok(out)
}

/// The text of a JSON string token (quotes included), unescaped.
pub fn unquote(token: &str) -> R<Cow<'_, str>> {
    let inner = token
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or(Unsure)?;
    if !inner.contains('\\') {
        return Ok(Cow::Borrowed(inner));
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next().ok_or(Unsure)? {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{08}',
            'f' => '\u{0C}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16).map_err(|_| Unsure)?;
                char::from_u32(code).ok_or(Unsure)?
            }
            _ => return Err(Unsure),
        });
    }
    Ok(Cow::Owned(out))
}

/// What `locate_around` gathers along its path: the span of each existing
/// prefix of the path, and the container values beside the path at each
/// depth.
struct Walk {
    spans: Vec<Option<Range<usize>>>,
    siblings: Vec<Vec<(Range<usize>, &'static str)>>,
}

impl Walk {
    fn new(path_len: usize) -> Walk {
        Walk {
            spans: vec![None; path_len + 1],
            siblings: vec![vec![]; path_len + 1],
        }
    }

    /// The skeleton of `text` this walk along a path of `path_len` segments
    /// found: unsure when the deepest existing container on it is the root.
    fn skeleton(&self, text: &str, path_len: usize) -> R<Skeleton> {
        let depth = (1..=path_len)
            .rev()
            .find(|d| {
                self.spans[*d]
                    .as_ref()
                    .is_some_and(|r| matches!(text.as_bytes()[r.start], b'{' | b'['))
            })
            .ok_or(Unsure)?;
        let kept = self.spans[depth].clone().ok_or(Unsure)?;
        let mut cuts: Vec<(Range<usize>, &str)> =
            self.siblings[..depth].iter().flatten().cloned().collect();
        cuts.sort_by_key(|(r, _)| r.start);
        let mut out = String::with_capacity(text.len().min(1 << 16));
        let mut at = 0;
        let mut kept_in_skeleton = 0..0;
        for (range, with) in cuts
            .iter()
            .map(|(r, w)| (r.clone(), *w))
            .chain([(text.len()..text.len(), "")])
        {
            if at <= kept.start && kept.start <= range.start {
                let start = out.len() + kept.start - at;
                kept_in_skeleton = start..start + kept.len();
            }
            out.push_str(&text[at..range.start]);
            out.push_str(with);
            at = range.end;
        }
        Ok(Skeleton {
            text: out,
            kept,
            kept_in_skeleton,
            depth,
        })
    }
}

/// Where the run of spaces, tabs and `\n` starting at `pos` ends. Eight
/// bytes are looked at in one step: a pretty-printed file is a third
/// indentation, and most runs are either one space or a line's indent.
#[inline]
fn past_blanks(b: &[u8], mut pos: usize) -> usize {
    while let Some(v) = eight(b, pos) {
        let not_blank = not_byte(v, b' ') & not_byte(v, b'\n') & not_byte(v, b'\t');
        if not_blank != 0 {
            return pos + first_marked(not_blank);
        }
        pos += 8;
    }
    while matches!(b.get(pos), Some(b' ' | b'\n' | b'\t')) {
        pos += 1;
    }
    pos
}

/// Where the first `"` or `\` is in `b`. The first sixteen bytes are
/// looked at eight at a time: most keys and many values are shorter, and
/// `memchr2` costs a call and its set-up even when the answer is near.
#[inline]
fn quote_or_backslash(b: &[u8]) -> Option<usize> {
    let mut at = 0;
    while at < 16 {
        let Some(v) = eight(b, at) else { break };
        let hit = !(not_byte(v, b'"') & not_byte(v, b'\\')) & HIGH_BITS;
        if hit != 0 {
            return Some(at + first_marked(hit));
        }
        at += 8;
    }
    memchr::memchr2(b'"', b'\\', &b[at..]).map(|i| at + i)
}

const HIGH_BITS: u64 = u64::from_le_bytes([0x80; 8]);

/// The eight bytes at `pos` (the first in the lowest byte), if there are eight.
#[inline]
fn eight(b: &[u8], pos: usize) -> Option<u64> {
    let chunk = b.get(pos..pos.checked_add(8)?)?;
    Some(u64::from_le_bytes(chunk.try_into().ok()?))
}

/// The high bit of each byte of `v` that is not `byte` (exact: no carry
/// crosses from one byte to the next).
#[inline]
fn not_byte(v: u64, byte: u8) -> u64 {
    const LOW7: u64 = u64::from_le_bytes([0x7f; 8]);
    let x = v ^ u64::from_le_bytes([byte; 8]);
    (((x & LOW7) + LOW7) | x) & HIGH_BITS
}

/// Index of the first byte whose high bit is set in `marks` (not zero).
#[inline]
fn first_marked(marks: u64) -> usize {
    (marks.trailing_zeros() / 8) as usize
}

struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    jsonc: bool,
    depth: usize,
    /// For `locate_first`: how many wanted values are still to be found;
    /// at zero the walk stops (as if unsure, which `locate_in` undoes).
    stop_after: Option<usize>,
    /// For `locate_around`: which wanted path the skeleton is taken around,
    /// and what the walk gathered for it so far.
    around: Option<(usize, Walk)>,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str, jsonc: bool) -> Self {
        Scanner {
            text,
            b: text.as_bytes(),
            pos: 0,
            jsonc,
            depth: 0,
            stop_after: None,
            around: None,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    /// One value, with nothing but white space (and comments) around it.
    fn document(&mut self, root: impl FnOnce(&mut Self) -> R<()>) -> R<()> {
        self.ws()?;
        if self.pos == self.b.len() {
            // an empty document reads as `{}`; the full parser says so
            return Err(Unsure);
        }
        root(self)?;
        self.ws()?;
        match self.pos == self.b.len() {
            true => Ok(()),
            false => Err(Unsure),
        }
    }

    fn ws(&mut self) -> R<()> {
        loop {
            self.pos = past_blanks(self.b, self.pos);
            match self.peek() {
                Some(b'\r') if self.b.get(self.pos + 1) == Some(&b'\n') => self.pos += 2,
                Some(b'/') if self.jsonc => self.comment()?,
                _ => return Ok(()),
            }
        }
    }

    // Out of line: white space is skipped before every token, comments are
    // rare, and their search would otherwise make each skip set up its frame.
    #[inline(never)]
    fn comment(&mut self) -> R<()> {
        let rest = &self.b[self.pos..];
        match rest.get(1) {
            Some(b'/') => {
                let end = memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len());
                if rest.get(end) == Some(&b'\r') && rest.get(end + 1) != Some(&b'\n') {
                    return Err(Unsure);
                }
                self.pos += end;
                Ok(())
            }
            Some(b'*') => {
                let end = memchr::memmem::find(&rest[2..], b"*/").ok_or(Unsure)?;
                let body = &rest[2..2 + end];
                // a lone `\r` counts as a line end for some readers and not others
                if memchr::memchr_iter(b'\r', body).any(|i| body.get(i + 1) != Some(&b'\n')) {
                    return Err(Unsure);
                }
                self.pos += 2 + end + 2;
                Ok(())
            }
            _ => Err(Unsure),
        }
    }

    fn expect(&mut self, byte: u8) -> R<()> {
        match self.peek() == Some(byte) {
            true => {
                self.pos += 1;
                Ok(())
            }
            false => Err(Unsure),
        }
    }

    /// A string token starting at `pos`; its range, quotes included.
    fn string(&mut self) -> R<Range<usize>> {
        let start = self.pos;
        self.expect(b'"')?;
        loop {
            let i = quote_or_backslash(&self.b[self.pos..]).ok_or(Unsure)?;
            self.pos += i;
            match self.b[self.pos] {
                b'"' => {
                    self.pos += 1;
                    return Ok(start..self.pos);
                }
                _ => match self.b.get(self.pos + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.pos += 2,
                    Some(b'u') => {
                        let hex = self.b.get(self.pos + 2..self.pos + 6).ok_or(Unsure)?;
                        let hex = std::str::from_utf8(hex).map_err(|_| Unsure)?;
                        let code = u16::from_str_radix(hex, 16).map_err(|_| Unsure)?;
                        if hex.starts_with(['+', '-']) || (0xD800..=0xDFFF).contains(&code) {
                            return Err(Unsure);
                        }
                        self.pos += 6;
                    }
                    _ => return Err(Unsure),
                },
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> R<()> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(Unsure),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(Unsure);
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(Unsure);
            }
        }
        // `1x`, `1true`: the parser reads a word; so does the caller's next step
        match self.peek() {
            Some(b) if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'.' => {
                Err(Unsure)
            }
            _ => Ok(()),
        }
    }

    fn word(&mut self, word: &[u8]) -> R<()> {
        if !self.b[self.pos..].starts_with(word) {
            return Err(Unsure);
        }
        self.pos += word.len();
        match self.peek() {
            Some(b) if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' => Err(Unsure),
            _ => Ok(()),
        }
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        match self.depth > MAX_DEPTH {
            true => Err(Unsure),
            false => Ok(()),
        }
    }

    /// An object at `pos`; `member` reads each value (white space before it
    /// skipped) given the key's token range.
    fn object(&mut self, mut member: impl FnMut(&mut Self, Range<usize>) -> R<()>) -> R<()> {
        self.enter()?;
        self.expect(b'{')?;
        self.ws()?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            let key = self.string()?;
            self.ws()?;
            self.expect(b':')?;
            self.ws()?;
            member(self, key)?;
            self.ws()?;
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.ws()?;
                    if self.peek() == Some(b'}') && self.jsonc {
                        self.pos += 1;
                        break;
                    }
                }
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(Unsure),
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// An array at `pos`; `element` reads each element given its index.
    fn array(&mut self, mut element: impl FnMut(&mut Self, usize) -> R<()>) -> R<()> {
        self.enter()?;
        self.expect(b'[')?;
        self.ws()?;
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(());
        }
        let mut index = 0;
        loop {
            element(self, index)?;
            index += 1;
            self.ws()?;
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.ws()?;
                    if self.peek() == Some(b']') && self.jsonc {
                        self.pos += 1;
                        break;
                    }
                }
                Some(b']') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(Unsure),
            }
        }
        self.depth -= 1;
        Ok(())
    }

    fn skip_value(&mut self) -> R<()> {
        match self.peek().ok_or(Unsure)? {
            b'{' => self.object(|s, _| s.skip_value()),
            b'[' => self.array(|s, _| s.skip_value()),
            b'"' => self.string().map(drop),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => self.number(),
        }
    }

    fn key(&self, token: &Range<usize>) -> R<Cow<'a, str>> {
        unquote(&self.text[token.clone()])
    }

    /// `locate`'s walk: `live` are the wanted paths that lead through the
    /// value at `pos`, `keys` where the keys leading here start.
    fn find(
        &mut self,
        wanted: &[&[PathSeg]],
        live: &[usize],
        keys: &mut Vec<usize>,
        out: &mut [Option<Found>],
    ) -> R<()> {
        let depth = keys.len();
        let start = self.pos;
        // The segment of `locate_around`'s path that leads on from here, if
        // this value is on that path: the containers beside it are noted.
        let around = match &self.around {
            Some((w, _)) if live.contains(w) => Some((*w, wanted[*w].get(depth))),
            _ => None,
        };
        let beside_key = |key: &str| matches!(around, Some((_, Some(PathSeg::Key(k)))) if k != key);
        let beside_index =
            |i: usize| matches!(around, Some((_, Some(PathSeg::Index(n)))) if *n != i);
        let deeper: Vec<usize> = live
            .iter()
            .copied()
            .filter(|w| wanted[*w].len() > depth)
            .collect();
        match self.peek() {
            _ if deeper.is_empty() => self.skip_value()?,
            Some(b'{') => {
                let mut seen: Vec<String> = vec![];
                self.object(|s, token| {
                    let key = s.key(&token)?;
                    let from = s.pos;
                    let next: Vec<usize> = deeper
                        .iter()
                        .copied()
                        .filter(|w| matches!(&wanted[*w][depth], PathSeg::Key(k) if *k == key))
                        .collect();
                    if next.is_empty() {
                        s.skip_value()?;
                    } else {
                        if seen.iter().any(|k| *k == key) {
                            return Err(Unsure);
                        }
                        keys.push(token.start);
                        let r = s.find(wanted, &next, keys, out);
                        keys.pop();
                        r?;
                    }
                    if beside_key(&key) {
                        s.noted_beside(depth, from);
                    }
                    if !next.is_empty() {
                        seen.push(key.into_owned());
                    }
                    Ok(())
                })?
            }
            Some(b'[') => self.array(|s, index| {
                let from = s.pos;
                let next: Vec<usize> = deeper
                    .iter()
                    .copied()
                    .filter(|w| wanted[*w][depth] == PathSeg::Index(index))
                    .collect();
                if next.is_empty() {
                    s.skip_value()?;
                } else {
                    keys.push(s.pos);
                    let r = s.find(wanted, &next, keys, out);
                    keys.pop();
                    r?;
                }
                if beside_index(index) {
                    s.noted_beside(depth, from);
                }
                Ok(())
            })?,
            _ => self.skip_value()?,
        }
        if let (Some((_, walk)), Some(_)) = (&mut self.around, around) {
            walk.spans[depth] = Some(start..self.pos);
        }
        for w in live.iter().filter(|w| wanted[**w].len() == depth) {
            out[*w] = Some(Found {
                value: start..self.pos,
                keys: keys.clone(),
            });
            if let Some(left) = &mut self.stop_after {
                *left -= 1;
            }
        }
        match self.stop_after {
            Some(0) => Err(Unsure),
            _ => Ok(()),
        }
    }

    /// For `locate_around`: the value from `from` to here, beside its path
    /// at `depth`, is noted if it is a container worth emptying.
    fn noted_beside(&mut self, depth: usize, from: usize) {
        let with = match self.b[from] {
            b'{' => "{}",
            b'[' => "[]",
            _ => return,
        };
        if let Some((_, walk)) = &mut self.around {
            if self.pos - from > with.len() {
                walk.siblings[depth].push((from..self.pos, with));
            }
        }
    }

    fn secrets(
        &mut self,
        inside: bool,
        key: Option<&str>,
        container: &dyn Fn(&str) -> bool,
        is_secret: &dyn Fn(bool, Option<&str>) -> bool,
        out: &mut Vec<String>,
    ) -> R<()> {
        match self.peek().ok_or(Unsure)? {
            b'"' => {
                let token = self.string()?;
                if is_secret(inside, key) {
                    out.push(unquote(&self.text[token])?.into_owned());
                }
                Ok(())
            }
            b'{' => self.object(|s, token| {
                let key = s.key(&token)?;
                let below = inside || container(&key);
                match s.peek() {
                    // a string member is judged by its own key, not as a container
                    Some(b'"') => s.secrets(inside, Some(&key), container, is_secret, out),
                    _ => s.secrets(below, None, container, is_secret, out),
                }
            }),
            b'[' => self.array(|s, _| s.secrets(inside, None, container, is_secret, out)),
            _ => self.skip_value(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> PathSeg {
        PathSeg::Key(k.into())
    }

    #[test]
    fn finds_values_by_path_and_checks_the_rest() {
        let text = "{\"a\": {\"b\": [1, {\"c\": \"x\"}]}, \"d\\u0041\": true}";
        let ab = [key("a"), key("b")];
        let c = [key("a"), key("b"), PathSeg::Index(1), key("c")];
        let d = [key("dA")];
        let missing = [key("a"), key("zz")];
        let found = locate(text, false, &[&ab, &c, &d, &missing]).unwrap();
        let at = |i: usize| found[i].as_ref().map(|f| &text[f.value.clone()]);
        assert_eq!(at(0), Some("[1, {\"c\": \"x\"}]"));
        assert_eq!(at(1), Some("\"x\""));
        assert_eq!(at(2), Some("true"));
        assert_eq!(at(3), None);
        assert_eq!(found[0].as_ref().unwrap().keys, vec![1, 7]);
        assert!(
            locate("{\"a\": 1,}", false, &[]).is_err(),
            "JSON: no trailing comma"
        );
        assert!(locate("{\"a\": 1,} // c", true, &[]).is_ok(), "JSONC: both");
        assert!(check("{\"a\": 01}", true).is_err());
        assert!(check("{\"a\": \"\\ud800\"}", true).is_err());
        assert!(
            check("", true).is_err(),
            "an empty document is the parser's"
        );
    }

    #[test]
    fn a_wanted_key_twice_is_unsure_but_others_may_repeat() {
        let text = r#"{"a": 1, "x": 2, "a": 3, "x": 4}"#;
        assert!(locate(text, false, &[&[key("a")]]).is_err());
        assert!(locate(text, false, &[&[key("b")]]).is_ok());
    }

    #[test]
    fn the_skeleton_keeps_the_path_and_empties_big_values_beside_it() {
        let text = "{\n  \"big\": {\"x\": [1, 2, 3]},\n  \"s\": {\n    \"a\": {\"k\": 1},\n    \"b\": [4, 5]\n  },\n  \"after\": [6, 7]\n}\n";
        let sk = skeleton(text, false, &[key("s"), key("a"), key("k")]).unwrap();
        assert_eq!(
            sk.text,
            "{\n  \"big\": {},\n  \"s\": {\n    \"a\": {\"k\": 1},\n    \"b\": []\n  },\n  \"after\": []\n}\n"
        );
        assert_eq!(&text[sk.kept.clone()], "{\"k\": 1}");
        assert_eq!(&sk.text[sk.kept_in_skeleton.clone()], "{\"k\": 1}");
        assert_eq!(sk.depth, 2);
        // a missing key: the deepest existing object is kept whole
        let sk = skeleton(text, false, &[key("s"), key("zz"), key("k")]).unwrap();
        assert_eq!(sk.depth, 1);
        assert_eq!(
            &sk.text[sk.kept_in_skeleton.clone()],
            &text[sk.kept.clone()]
        );
        assert!(skeleton(text, false, &[key("nope")]).is_err(), "the root");
    }

    proptest::proptest! {
        /// The eight-at-a-time skip ends where a byte-by-byte one does.
        #[test]
        fn blanks_end_where_the_first_other_byte_is(
            text in "[ \t\n\rx\u{a0}\u{2028}]{0,40}",
            from in 0usize..40,
        ) {
            let b = text.as_bytes();
            let from = from.min(b.len());
            let naive = from + b[from..].iter().take_while(|c| matches!(c, b' ' | b'\n' | b'\t')).count();
            proptest::prop_assert_eq!(past_blanks(b, from), naive);
        }

        /// The same for the end of a string's run of plain bytes.
        #[test]
        fn a_quote_or_backslash_is_found_where_memchr_finds_it(
            text in "[a\"\\\\\u{e9}\u{80}]{0,40}",
            from in 0usize..40,
        ) {
            let b = text.as_bytes();
            let from = from.min(b.len());
            proptest::prop_assert_eq!(
                quote_or_backslash(&b[from..]),
                memchr::memchr2(b'"', b'\\', &b[from..])
            );
        }
    }

    #[test]
    fn secret_strings_follow_keys() {
        let text =
            r#"{"env": {"A": "1", "n": {"B": "2"}}, "token": "t", "x": ["y"], "h": {"c": "z"}}"#;
        let got = secret_strings(text, false, &|k| k == "env", &|inside, key| {
            inside || key == Some("token")
        })
        .unwrap();
        assert_eq!(got, ["1", "2", "t"]);
    }
}
