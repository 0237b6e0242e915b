//! Line hashes for matching SEARCH lines: exact, and whitespace-tolerant (ends trimmed, inner runs
//! of ASCII whitespace as one space), computed without building the normalised line.

pub(super) fn hash_exact(line: &str) -> u64 {
    TextHasher::hash(line.as_bytes())
}

/// The bytes of `line` without ASCII whitespace at its ends and with each inner run of it as one
/// space: what the whitespace-tolerant match compares. (Other Unicode spaces are rare in code and
/// compared as they are; keeping to ASCII makes this a plain byte loop.)
pub(super) struct LooseBytes<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> LooseBytes<'a> {
    pub(super) fn new(line: &'a str) -> Self {
        Self { bytes: line.as_bytes().trim_ascii(), at: 0 }
    }
}

impl Iterator for LooseBytes<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        if !b.is_ascii_whitespace() {
            return Some(b);
        }
        // Trimmed, so a whitespace run always has a word after it.
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
        Some(b' ')
    }
}

/// The hash of a line's [`LooseBytes`].
pub(super) fn hash_loose(line: &str) -> u64 {
    let mut h = ByteHasher::default();
    LooseBytes::new(line).for_each(|b| h.push(b));
    h.finish()
}

/// Feeds a [`TextHasher`] one byte at a time, 8 bytes a step.
#[derive(Default)]
struct ByteHasher {
    hasher: TextHasher,
    word: u64,
    len: u32,
}

impl ByteHasher {
    fn push(&mut self, byte: u8) {
        self.word |= u64::from(byte) << (8 * self.len);
        self.len += 1;
        if self.len == 8 {
            self.hasher.add(self.word);
            (self.word, self.len) = (0, 0);
        }
    }

    fn finish(mut self) -> u64 {
        self.hasher.add(self.word ^ (u64::from(self.len) << 59));
        self.hasher.finish()
    }
}

/// A fast hash for lines (FxHash's mixing): the line tables only need a decent spread, as matches
/// are confirmed on the text, and wasm has 64-bit but no 128-bit multiplication.
#[derive(Default, Clone, Copy)]
struct TextHasher(u64);

const K1: u64 = 0xf135_7aea_2e62_a9c5;
const K2: u64 = 0x9e37_79b9_7f4a_7c15;

impl TextHasher {
    /// Mixes in 8 bytes.
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K1);
    }

    /// The hash so far.
    fn finish(self) -> u64 {
        fmix(self.0)
    }

    /// The hash of `bytes`, 16 bytes a step in two independent lanes (twice the speed of one).
    fn hash(bytes: &[u8]) -> u64 {
        let (mut a, mut b) = (bytes.len() as u64, K2);
        let mut chunks = bytes.chunks_exact(16);
        for chunk in &mut chunks {
            let (x, y) = chunk.split_at(8);
            a = (a.rotate_left(5) ^ le_word(x)).wrapping_mul(K1);
            b = (b.rotate_left(5) ^ le_word(y)).wrapping_mul(K2);
        }
        let rest = chunks.remainder();
        let (x, y) = rest.split_at(rest.len().min(8));
        a = (a.rotate_left(5) ^ le_word(x)).wrapping_mul(K1);
        b = (b.rotate_left(5) ^ le_word(y)).wrapping_mul(K2);
        fmix(a ^ b.rotate_left(32))
    }
}

/// MurmurHash3's finaliser: a multiply only carries differences upwards, and hash tables use both
/// ends of a hash.
fn fmix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// Up to 8 bytes as a little-endian number.
fn le_word(bytes: &[u8]) -> u64 {
    match <[u8; 8]>::try_from(bytes) {
        Ok(word) => u64::from_le_bytes(word),
        Err(_) => {
            let mut word = [0u8; 8];
            let n = bytes.len().min(8);
            word[..n].copy_from_slice(&bytes[..n]);
            u64::from_le_bytes(word)
        }
    }
}
