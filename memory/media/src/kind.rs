//! The coarse kind of a media item, derived from its MIME type.

/// What sort of content a blob is, from the top-level part of its MIME type. The kernel uses it
/// to pick a modality (an image model embeds images only); anything unrecognised is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaKind {
    /// `image/*`.
    Image,
    /// `audio/*`.
    Audio,
    /// `video/*`.
    Video,
    /// Anything else, including an unknown or empty MIME type.
    Other,
}

impl MediaKind {
    /// The kind of a MIME type such as `image/png` or `Audio/OGG; codecs=opus` (case and
    /// parameters do not matter).
    pub fn from_mime(mime: &str) -> MediaKind {
        let top = mime.trim().split('/').next().unwrap_or("").trim();
        if top.eq_ignore_ascii_case("image") {
            MediaKind::Image
        } else if top.eq_ignore_ascii_case("audio") {
            MediaKind::Audio
        } else if top.eq_ignore_ascii_case("video") {
            MediaKind::Video
        } else {
            MediaKind::Other
        }
    }

    /// The name stored in the database: `image`, `audio`, `video` or `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::Audio => "audio",
            MediaKind::Video => "video",
            MediaKind::Other => "other",
        }
    }

    /// The kind named by [`MediaKind::as_str`]; `None` for any other string.
    pub fn parse(name: &str) -> Option<MediaKind> {
        match name {
            "image" => Some(MediaKind::Image),
            "audio" => Some(MediaKind::Audio),
            "video" => Some(MediaKind::Video),
            "other" => Some(MediaKind::Other),
            _ => None,
        }
    }
}

impl std::fmt::Display for MediaKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
