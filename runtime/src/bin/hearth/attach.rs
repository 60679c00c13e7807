//! `hearth send --attach FILE`: a file as a content block of the `send` request (a data URL of
//! its bytes and a MIME type read from its name).

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

/// Largest file sent: the largest item the daemon keeps.
pub const MAX_ATTACH_BYTES: u64 = hearth_kernel::durable::MAX_MEDIA_BYTES as u64;

/// Most bytes of files one message carries: as base64 they must fit the socket's 24 MiB
/// request line with the rest of the request.
pub const MAX_ATTACH_TOTAL: u64 = 17 * 1024 * 1024;

/// The content blocks of `files`, or why one cannot be sent.
pub fn blocks(files: &[impl AsRef<Path>]) -> Result<Vec<Value>, String> {
    let mut total = 0;
    for file in files {
        let file = file.as_ref();
        total += std::fs::metadata(file)
            .map_err(|e| format!("{}: {e}", file.display()))?
            .len();
    }
    if total > MAX_ATTACH_TOTAL {
        return Err(format!(
            "{} MB of files in one message; at most {} MB can be sent together",
            total / (1024 * 1024),
            MAX_ATTACH_TOTAL / (1024 * 1024)
        ));
    }
    files.iter().map(|f| block(f.as_ref())).collect()
}

fn block(file: &Path) -> Result<Value, String> {
    let meta = std::fs::metadata(file).map_err(|e| format!("{}: {e}", file.display()))?;
    if meta.len() > MAX_ATTACH_BYTES {
        return Err(format!(
            "{}: {} MB; files over {} MB cannot be sent",
            file.display(),
            meta.len() / (1024 * 1024),
            MAX_ATTACH_BYTES / (1024 * 1024)
        ));
    }
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    if bytes.is_empty() {
        return Err(format!("{}: the file is empty", file.display()));
    }
    let mime = mime_of(file);
    let url = format!("data:{mime};base64,{}", STANDARD.encode(&bytes));
    let key = if mime.starts_with("audio/") {
        "audio_url"
    } else if mime.starts_with("image/") {
        "image_url"
    } else {
        "file_url"
    };
    Ok(json!({"type": key, key: {"url": url}}))
}

/// The MIME type of a file by its extension (`application/octet-stream` when unknown).
pub fn mime_of(file: &Path) -> &'static str {
    let ext = file
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "heic" => "image/heic",
        "bmp" => "image/bmp",
        "svg" => "image/svg+xml",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" | "oga" | "opus" => "audio/ogg",
        "m4a" => "audio/mp4",
        "flac" => "audio/flac",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "pdf" => "application/pdf",
        "txt" | "md" => "text/plain",
        _ => "application/octet-stream",
    }
}
