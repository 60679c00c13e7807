//! `e5-small-q4.bin`, the file multilingual-e5-small ships in: the XLM-R SentencePiece vocabulary,
//! a per-character normalisation map and the weights, matrices in q4_0 blocks. It is parsed
//! through a read-only mapping that is dropped once the header, vocabulary and map are decoded. The 96M-weight word table is then read row by row (`pread`) as texts use its words,
//! so it never becomes resident in the daemon: a mapped table grew a long-running daemon's RSS
//! by every new word's page (bounded only by the 54 MB table), a row read costs one syscall
//! beside milliseconds of inference.
//!
//! Layout (little-endian): `E5S1`, u32 version; i32 hidden, layers, heads, ff, vocab, max
//! positions, type vocab; f32 eps; i32 block size (32); i32 pieces, bos, eos, pad, unk; u64 blob
//! bytes; u32 offsets[pieces + 1]; f32 scores[pieces]; the piece bytes; i32 map entries, u32 map
//! bytes, then per entry u32 code point, u8 n, u32 replacement[n]; i32 tensors, then per tensor u16
//! name length, name, u8 dtype (0 f32, 1 q4_0), u32 values, u64 offset, u64 bytes.

// The one unsafe operation: mapping the installed weights file.
#![allow(unsafe_code)]

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::embed::EmbedError;

const MAGIC: &[u8; 4] = b"E5S1";
const BLOCK: usize = 32;
/// fp16 scale + 16 bytes of nibbles.
const BLOCK_BYTES: usize = 18;
const DTYPE_Q4: u8 = 1;
const WORD_TABLE: &str = "emb.word";
/// Widest hidden size accepted: a word row is read into a stack buffer of this many blocks.
const MAX_HIDDEN: usize = 2048;

/// The model's dimensions and special tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct E5Header {
    pub hidden: usize,
    pub max_positions: usize,
    pub vocab: usize,
    pub bos: u32,
    pub eos: u32,
    pub unk: u32,
}

/// The file with its vocabulary and normalisation map decoded; word rows are read from it.
pub(crate) struct E5Weights {
    file: File,
    path: PathBuf,
    pub header: E5Header,
    /// `offsets[i]..offsets[i + 1]` are piece `i`'s bytes in `blob`.
    offsets: Vec<u32>,
    pub scores: Vec<f32>,
    /// Every piece's UTF-8 bytes, copied out of the file (a few MB, read on every lookup).
    blob: Vec<u8>,
    /// Sorted by code point: (code point, start, end) into `replacements`.
    norm: Vec<(u32, u32, u32)>,
    replacements: Vec<char>,
    word_at: usize,
}

impl std::fmt::Debug for E5Weights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("E5Weights")
            .field("header", &self.header)
            .field("pieces", &self.scores.len())
            .finish_non_exhaustive()
    }
}

/// A bounds-checked little-endian reader over the mapped bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], EmbedError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(bad(self.path, format!("truncated at byte {}", self.at)));
        };
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], EmbedError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, EmbedError> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, EmbedError> {
        self.array().map(u16::from_le_bytes)
    }

    fn u32(&mut self) -> Result<u32, EmbedError> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, EmbedError> {
        self.array().map(u64::from_le_bytes)
    }

    fn f32(&mut self) -> Result<f32, EmbedError> {
        self.array().map(f32::from_le_bytes)
    }

    /// A count or dimension: a non-negative i32.
    fn count(&mut self, what: &str) -> Result<usize, EmbedError> {
        let v = i32::from_le_bytes(self.array()?);
        usize::try_from(v).map_err(|_| bad(self.path, format!("negative {what}: {v}")))
    }

    fn usize_of(&self, v: u64) -> Result<usize, EmbedError> {
        usize::try_from(v).map_err(|_| bad(self.path, format!("size {v} out of range")))
    }
}

fn bad(path: &Path, message: String) -> EmbedError {
    EmbedError::Asset {
        path: path.to_path_buf(),
        message,
    }
}

impl E5Weights {
    /// Maps and checks `path`: header, vocabulary, map and the word table's place and size.
    pub(crate) fn open(path: &Path) -> Result<Self, EmbedError> {
        let file = File::open(path).map_err(|e| bad(path, e.to_string()))?;
        // SAFETY: the file is installed read-only by `make setup` and never written while
        // Hearth runs; a concurrent writer (a re-run setup replaces files by rename, which
        // leaves this mapping on the old inode) is the one way the mapping could change.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| bad(path, format!("mmap: {e}")))?;
        Self::parse(&map, file, path)
    }

    fn parse(map: &Mmap, file: File, path: &Path) -> Result<Self, EmbedError> {
        let mut c = Cursor {
            bytes: map,
            at: 0,
            path,
        };
        if c.take(4)? != MAGIC {
            return Err(bad(
                path,
                "not an e5 q4 weights file (bad magic)".to_owned(),
            ));
        }
        let _version = c.u32()?;
        let hidden = c.count("hidden size")?;
        let _layers = c.count("layers")?;
        let _heads = c.count("heads")?;
        let _ff = c.count("ff size")?;
        let vocab = c.count("vocabulary")?;
        let max_positions = c.count("positions")?;
        let _types = c.count("type vocabulary")?;
        let _eps = c.f32()?;
        let block = c.count("block size")?;
        if block != BLOCK || hidden == 0 || !hidden.is_multiple_of(BLOCK) || hidden > MAX_HIDDEN {
            return Err(bad(
                path,
                format!(
                    "block size {block}, hidden {hidden}: expected 32 and a multiple of it up to {MAX_HIDDEN}"
                ),
            ));
        }
        let pieces = c.count("pieces")?;
        let bos = c.count("bos")?;
        let eos = c.count("eos")?;
        let _pad = c.count("pad")?;
        let unk = c.count("unk")?;
        if pieces == 0 || [bos, eos, unk].iter().any(|&id| id >= pieces) || vocab < pieces {
            return Err(bad(
                path,
                format!("{pieces} pieces, vocabulary {vocab}, specials {bos}/{eos}/{unk}"),
            ));
        }
        let blob_len = {
            let v = c.u64()?;
            c.usize_of(v)?
        };
        let offsets: Vec<u32> = (0..=pieces).map(|_| c.u32()).collect::<Result<_, _>>()?;
        let scores: Vec<f32> = (0..pieces).map(|_| c.f32()).collect::<Result<_, _>>()?;
        let blob_at = c.at;
        c.take(blob_len)?;
        let ordered = offsets.windows(2).all(|w| w[0] <= w[1]);
        if !ordered || offsets.last().map(|&e| e as usize) != Some(blob_len) {
            return Err(bad(
                path,
                "piece offsets out of order or past the blob".to_owned(),
            ));
        }
        let blob = map[blob_at..blob_at + blob_len].to_vec();
        for i in 0..pieces {
            if std::str::from_utf8(&blob[offsets[i] as usize..offsets[i + 1] as usize]).is_err() {
                return Err(bad(path, format!("piece {i} is not UTF-8")));
            }
        }

        let entries = c.count("map entries")?;
        let map_bytes = c.u32()? as usize;
        let map_end = c.at + map_bytes;
        let mut norm = Vec::with_capacity(entries);
        let mut replacements = Vec::new();
        for _ in 0..entries {
            let cp = c.u32()?;
            let n = c.u8()?;
            let start = replacements.len() as u32;
            for _ in 0..n {
                let out = c.u32()?;
                let ch = char::from_u32(out)
                    .ok_or_else(|| bad(path, format!("map replaces U+{cp:04X} by U+{out:04X}")))?;
                replacements.push(ch);
            }
            norm.push((cp, start, replacements.len() as u32));
        }
        if c.at != map_end || !norm.windows(2).all(|w| w[0].0 < w[1].0) {
            return Err(bad(path, "normalisation map is malformed".to_owned()));
        }

        let tensors = c.count("tensors")?;
        let mut word_at = None;
        for _ in 0..tensors {
            let name_len = c.u16()? as usize;
            let name = c.take(name_len)?;
            let dtype = c.u8()?;
            let values = c.u32()? as usize;
            let (offset, bytes) = (c.u64()?, c.u64()?);
            let (offset, bytes) = (c.usize_of(offset)?, c.usize_of(bytes)?);
            if offset.checked_add(bytes).is_none_or(|end| end > map.len()) {
                return Err(bad(
                    path,
                    "a tensor runs past the end of the file".to_owned(),
                ));
            }
            if name == WORD_TABLE.as_bytes() {
                let want = vocab * hidden;
                if dtype != DTYPE_Q4 || values != want || bytes != want / BLOCK * BLOCK_BYTES {
                    return Err(bad(
                        path,
                        format!("{WORD_TABLE}: dtype {dtype}, {values} values, {bytes} bytes"),
                    ));
                }
                word_at = Some(offset);
            }
        }
        let word_at = word_at.ok_or_else(|| bad(path, format!("no {WORD_TABLE} tensor")))?;
        let header = E5Header {
            hidden,
            max_positions,
            vocab,
            bos: bos as u32,
            eos: eos as u32,
            unk: unk as u32,
        };
        Ok(Self {
            file,
            path: path.to_path_buf(),
            header,
            offsets,
            scores,
            blob,
            norm,
            replacements,
            word_at,
        })
    }

    pub(crate) fn pieces(&self) -> usize {
        self.scores.len()
    }

    /// The UTF-8 bytes of piece `id` (checked at load).
    pub(crate) fn piece(&self, id: usize) -> &[u8] {
        let (start, end) = (self.offsets[id] as usize, self.offsets[id + 1] as usize);
        &self.blob[start..end]
    }

    /// What the normaliser turns `c` into, or `None` when it stays itself.
    pub(crate) fn normalize(&self, c: char) -> Option<&[char]> {
        let cp = c as u32;
        let at = self.norm.binary_search_by_key(&cp, |e| e.0).ok()?;
        let (_, start, end) = self.norm[at];
        Some(&self.replacements[start as usize..end as usize])
    }

    /// Writes token `id`'s word embedding into `out` (`hidden` values), read from the file.
    pub(crate) fn word_row(&self, id: u32, out: &mut [f32]) -> Result<(), EmbedError> {
        let hidden = self.header.hidden;
        let row_bytes = hidden / BLOCK * BLOCK_BYTES;
        // Ids come from the tokenizer, which only yields ids of pieces (< vocab); the table's
        // place and size were checked against the file's length at open.
        let at = self.word_at + id as usize * row_bytes;
        let mut buf = [0u8; MAX_HIDDEN / BLOCK * BLOCK_BYTES];
        let row = &mut buf[..row_bytes];
        self.file
            .read_exact_at(row, at as u64)
            .map_err(|e| bad(&self.path, format!("word row {id}: {e}")))?;
        for (block, values) in row
            .chunks_exact(BLOCK_BYTES)
            .zip(out.chunks_exact_mut(BLOCK))
        {
            let d = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
            for (j, &q) in block[2..].iter().enumerate() {
                values[j] = (f32::from(q & 15) - 8.0) * d;
                values[j + BLOCK / 2] = (f32::from(q >> 4) - 8.0) * d;
            }
        }
        Ok(())
    }
}

/// IEEE half → single precision (subnormals, infinities and NaN included).
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: value = frac * 2^-24, exactly representable in f32.
            let v = frac as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, _) => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}
