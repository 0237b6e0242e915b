//! Checks a GGUF file before llama.cpp sees it, and reads the metadata Flint needs.
//!
//! llama.cpp trusts its input: a truncated or mangled file can make it read past a mapping or abort
//! the whole process, which would take the gateway and every other provider down with it. So the
//! header, the metadata and the tensor table are parsed here first, and every tensor's data must
//! lie inside the file.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// What is wrong with a model file, in words a person can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GgufError {
    /// No file at the path.
    #[error(
        "model file {path} not found; run `cargo xtask setup` (or `cargo xtask serve`) to fetch the default model, or set model_path in flint.toml"
    )]
    Missing {
        /// The path looked at.
        path: String,
    },
    /// The file exists but could not be read.
    #[error("model file {path} cannot be read: {reason}")]
    Unreadable {
        /// The path looked at.
        path: String,
        /// The OS error.
        reason: String,
    },
    /// The file does not start like a GGUF file.
    #[error(
        "model file {path} is not a GGUF file (it starts with {start:?}); Flint's local provider loads llama.cpp GGUF models only"
    )]
    NotGguf {
        /// The path looked at.
        path: String,
        /// Its first bytes, for the log.
        start: String,
    },
    /// A GGUF version this loader does not know.
    #[error("model file {path} is GGUF version {version}; only versions 2 and 3 are supported")]
    Version {
        /// The path looked at.
        path: String,
        /// The version found.
        version: u32,
    },
    /// The file ends before its header, metadata or tensor data does.
    #[error(
        "model file {path} is truncated or corrupt ({detail}); delete it and run `cargo xtask setup` again"
    )]
    Corrupt {
        /// The path looked at.
        path: String,
        /// What did not add up.
        detail: String,
    },
}

/// What Flint reads from a valid GGUF file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GgufInfo {
    /// `general.name`, if present.
    pub name: Option<String>,
    /// `general.architecture`, if present.
    pub architecture: Option<String>,
    /// `tokenizer.chat_template`, if present.
    pub chat_template: Option<String>,
    /// `tokenizer.ggml.model`, the vocabulary's kind (`gpt2`: byte-level BPE, `llama`:
    /// SentencePiece, `bert`, `t5`, …), if present.
    pub tokenizer: Option<String>,
    /// `<arch>.context_length`: the context the model was trained with.
    pub context_length: Option<u64>,
    /// Number of tensors.
    pub tensors: u64,
    /// File size in bytes.
    pub file_bytes: u64,
}

/// Validates `path` as a GGUF file whose tensor data is all present, and returns its metadata.
pub fn inspect(path: &Path) -> Result<GgufInfo, GgufError> {
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => GgufError::Missing { path: shown.clone() },
        _ => GgufError::Unreadable { path: shown.clone(), reason: e.to_string() },
    })?;
    let file_bytes = file
        .metadata()
        .map_err(|e| GgufError::Unreadable { path: shown.clone(), reason: e.to_string() })?
        .len();
    let mut reader = Reader { inner: BufReader::new(file), pos: 0, limit: file_bytes };
    let corrupt = |detail: String| GgufError::Corrupt { path: shown.clone(), detail };

    let mut magic = [0u8; 4];
    if reader.bytes_into(&mut magic).is_err() || &magic != b"GGUF" {
        let start = String::from_utf8_lossy(&magic[..(file_bytes.min(4) as usize)]).into_owned();
        return Err(GgufError::NotGguf { path: shown, start });
    }
    let version = reader.u32().map_err(&corrupt)?;
    if !(2..=3).contains(&version) {
        return Err(GgufError::Version { path: shown, version });
    }
    let tensors = reader.u64().map_err(&corrupt)?;
    let kv_count = reader.u64().map_err(&corrupt)?;

    let mut info = GgufInfo { tensors, file_bytes, ..GgufInfo::default() };
    let mut alignment = 32u64;
    for _ in 0..kv_count {
        let key = reader.string().map_err(&corrupt)?;
        let kind = reader.u32().map_err(&corrupt)?;
        match (key.as_str(), kind) {
            ("general.name", STRING) => info.name = Some(reader.string().map_err(&corrupt)?),
            ("general.architecture", STRING) => info.architecture = Some(reader.string().map_err(&corrupt)?),
            ("tokenizer.chat_template", STRING) => {
                info.chat_template = Some(reader.string().map_err(&corrupt)?)
            }
            ("tokenizer.ggml.model", STRING) => info.tokenizer = Some(reader.string().map_err(&corrupt)?),
            ("general.alignment", 4) => alignment = u64::from(reader.u32().map_err(&corrupt)?),
            (k, 4 | 10) if k.ends_with(".context_length") => {
                info.context_length = Some(if kind == 4 {
                    u64::from(reader.u32().map_err(&corrupt)?)
                } else {
                    reader.u64().map_err(&corrupt)?
                });
            }
            _ => reader.skip_value(kind).map_err(&corrupt)?,
        }
    }
    if alignment == 0 || !alignment.is_power_of_two() {
        return Err(corrupt(format!("alignment {alignment} is not a power of two")));
    }

    // Tensor table: every tensor's data range, relative to the aligned start of the data section.
    let mut data_needed = 0u64;
    for _ in 0..tensors {
        let name = reader.string().map_err(&corrupt)?;
        let dims = reader.u32().map_err(&corrupt)?;
        if dims > 8 {
            return Err(corrupt(format!("tensor {name} has {dims} dimensions")));
        }
        let mut elements = 1u64;
        for _ in 0..dims {
            let d = reader.u64().map_err(&corrupt)?;
            elements = elements
                .checked_mul(d)
                .ok_or_else(|| corrupt(format!("tensor {name} is impossibly large")))?;
        }
        let kind = reader.u32().map_err(&corrupt)?;
        let offset = reader.u64().map_err(&corrupt)?;
        let size = tensor_bytes(kind, elements).unwrap_or(0);
        data_needed = data_needed.max(offset.saturating_add(size));
    }
    let data_start = reader.pos.div_ceil(alignment) * alignment;
    let needed = data_start.saturating_add(data_needed);
    if needed > file_bytes {
        return Err(corrupt(format!("{file_bytes} bytes, but its tensors need {needed}")));
    }
    Ok(info)
}

const STRING: u32 = 8;
const ARRAY: u32 = 9;

/// Bytes taken by `elements` values of ggml type `kind`; `None` for a type not listed here (its
/// size is then not checked, so a newer quantisation still loads).
fn tensor_bytes(kind: u32, elements: u64) -> Option<u64> {
    let (block, bytes) = match kind {
        0 => (1, 4),        // F32
        1 | 30 => (1, 2),   // F16, BF16
        2 | 20 => (32, 18), // Q4_0, IQ4_NL
        3 => (32, 20),      // Q4_1
        6 => (32, 22),      // Q5_0
        7 => (32, 24),      // Q5_1
        8 => (32, 34),      // Q8_0
        10 => (256, 84),    // Q2_K
        11 => (256, 110),   // Q3_K
        12 => (256, 144),   // Q4_K
        13 => (256, 176),   // Q5_K
        14 => (256, 210),   // Q6_K
        23 => (256, 136),   // IQ4_XS
        24 => (1, 1),       // I8
        25 => (1, 2),       // I16
        26 => (1, 4),       // I32
        27 | 28 => (1, 8),  // I64, F64
        _ => return None,
    };
    Some(elements.div_ceil(block) * bytes)
}

/// A byte reader that refuses to read past the end of the file, so a corrupt length field becomes
/// an error instead of a huge allocation.
struct Reader<R> {
    inner: R,
    pos: u64,
    limit: u64,
}

impl<R: Read> Reader<R> {
    fn bytes_into(&mut self, buf: &mut [u8]) -> Result<(), String> {
        let len = buf.len() as u64;
        if self.pos.saturating_add(len) > self.limit {
            return Err(format!("it ends at byte {} inside its header", self.limit));
        }
        self.inner.read_exact(buf).map_err(|e| format!("read failed at byte {}: {e}", self.pos))?;
        self.pos += len;
        Ok(())
    }

    fn u32(&mut self) -> Result<u32, String> {
        let mut b = [0u8; 4];
        self.bytes_into(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let mut b = [0u8; 8];
        self.bytes_into(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn skip(&mut self, len: u64) -> Result<(), String> {
        if self.pos.saturating_add(len) > self.limit {
            return Err(format!("a field of {len} bytes at byte {} runs past the end", self.pos));
        }
        let copied = std::io::copy(&mut (&mut self.inner).take(len), &mut std::io::sink())
            .map_err(|e| format!("read failed at byte {}: {e}", self.pos))?;
        self.pos += copied;
        if copied < len {
            return Err(format!("it ends at byte {}", self.pos));
        }
        Ok(())
    }

    fn string(&mut self) -> Result<String, String> {
        let len = self.u64()?;
        if self.pos.saturating_add(len) > self.limit {
            return Err(format!("a string of {len} bytes at byte {} runs past the end", self.pos));
        }
        let mut buf = vec![0u8; len as usize];
        self.bytes_into(&mut buf)?;
        String::from_utf8(buf).map_err(|_| format!("a string at byte {} is not UTF-8", self.pos))
    }

    fn skip_value(&mut self, kind: u32) -> Result<(), String> {
        match kind {
            STRING => {
                let len = self.u64()?;
                self.skip(len)
            }
            ARRAY => {
                let item = self.u32()?;
                let count = self.u64()?;
                match scalar_bytes(item) {
                    Some(size) => self.skip(count.saturating_mul(size)),
                    None if item == STRING => {
                        for _ in 0..count {
                            let len = self.u64()?;
                            self.skip(len)?;
                        }
                        Ok(())
                    }
                    None => Err(format!("an array of unknown type {item} at byte {}", self.pos)),
                }
            }
            _ => match scalar_bytes(kind) {
                Some(size) => self.skip(size),
                None => Err(format!("a value of unknown type {kind} at byte {}", self.pos)),
            },
        }
    }
}

/// Size of a fixed-size GGUF metadata value type.
fn scalar_bytes(kind: u32) -> Option<u64> {
    match kind {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}
