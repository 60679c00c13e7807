//! What a request's media become for one source: the items' bytes as data URLs for a source
//! that takes images, nothing for one that does not (the message's text already carries a
//! marker line per item). Either way Hearth's own `media` references never leave the process.

use std::collections::VecDeque;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use parking_lot::Mutex;

use super::request::ChatRequest;

/// Reads an item of the media store by digest, its bytes checked against the digest; `None`
/// when the item is missing or damaged (the message then goes without it, its marker says
/// what it was).
pub trait MediaReader: Send + Sync {
    /// The item's bytes.
    fn read(&self, digest: &str) -> Option<Vec<u8>>;
}

/// Where the images of a request come from for a source that takes them: the media store, and
/// the data URLs of the images shown lately. A turn's tool rounds and the turns after it show
/// the same image again, and reading, checking and encoding up to 16 MiB each time would cost
/// more than the call's own overhead; an item is content-addressed, so its URL never goes
/// stale.
pub struct Images {
    reader: Arc<dyn MediaReader>,
    recent: Mutex<Recent>,
}

/// The URLs kept, oldest first, within a budget of bytes.
#[derive(Default)]
struct Recent {
    /// ((digest, type), data URL).
    urls: VecDeque<((String, String), Arc<str>)>,
    bytes: usize,
    budget: usize,
}

/// Bytes of data URLs [`Images::new`] keeps: three of the largest items (16 MiB, 21 MiB
/// encoded), or a few dozen phone photos.
pub const RECENT_IMAGE_BYTES: usize = 64 << 20;

impl Images {
    /// Images read through `reader`, keeping [`RECENT_IMAGE_BYTES`] of recent URLs.
    pub fn new(reader: Arc<dyn MediaReader>) -> Self {
        Self::with_budget(reader, RECENT_IMAGE_BYTES)
    }

    /// Images read through `reader`, keeping at most `budget` bytes of recent URLs.
    pub fn with_budget(reader: Arc<dyn MediaReader>, budget: usize) -> Self {
        Self {
            reader,
            recent: Mutex::new(Recent {
                budget,
                ..Recent::default()
            }),
        }
    }

    /// The data URL of item `digest` as a `mime` image; `None` when it cannot be read.
    fn data_url(&self, digest: &str, mime: &str) -> Option<Arc<str>> {
        if let Some(url) = self.recent.lock().take(digest, mime) {
            return Some(url);
        }
        // Read and encoded outside the lock: another call's image need not wait for this one.
        let bytes = self.reader.read(digest)?;
        let url: Arc<str> = format!("data:{mime};base64,{}", STANDARD.encode(bytes)).into();
        self.recent
            .lock()
            .keep((digest.to_owned(), mime.to_owned()), Arc::clone(&url));
        Some(url)
    }
}

impl Recent {
    /// The URL kept for `digest` as `mime`, moved to the newest place (a hit allocates
    /// nothing).
    fn take(&mut self, digest: &str, mime: &str) -> Option<Arc<str>> {
        let at = self
            .urls
            .iter()
            .position(|((d, m), _)| d == digest && m == mime)?;
        let entry = self.urls.remove(at)?;
        let url = Arc::clone(&entry.1);
        self.urls.push_back(entry);
        Some(url)
    }

    /// Keeps `url` as the newest, dropping the oldest past the budget; one larger than the
    /// whole budget is not kept.
    fn keep(&mut self, key: (String, String), url: Arc<str>) {
        if url.len() > self.budget || self.urls.iter().any(|(k, _)| *k == key) {
            return;
        }
        self.bytes += url.len();
        self.urls.push_back((key, url));
        while self.bytes > self.budget {
            let Some((_, old)) = self.urls.pop_front() else {
                break;
            };
            self.bytes -= old.len();
        }
    }
}

/// `request` as a source sees it: with `vision` and `images`, each image a message refers to
/// becomes an `image_url` part holding a data URL of its bytes; every media reference is
/// removed, and a message that exists only to show its media is left out when it shows none.
/// Only images are sent: audio and other files stay markers.
pub fn shown_to(mut request: ChatRequest, vision: bool, images: Option<&Images>) -> ChatRequest {
    // Most requests carry no media: they pass through untouched.
    if request.messages.iter().all(|m| m.media.is_empty()) {
        return request;
    }
    for message in &mut request.messages {
        for part in std::mem::take(&mut message.media) {
            let (true, Some(images)) = (vision, images) else {
                continue;
            };
            if !part.mime.starts_with("image/") {
                continue;
            }
            match images.data_url(&part.digest, &part.mime) {
                Some(url) => message.image_urls.push(url.to_string()),
                None => tracing::warn!(
                    digest = %part.digest,
                    "an image of the request could not be read from the media store; sent without it"
                ),
            }
        }
    }
    request
        .messages
        .retain(|m| !m.media_only || !m.image_urls.is_empty());
    for message in &mut request.messages {
        message.media_only = false;
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{MediaPart, Message};

    /// Item "aa" (and "cc", a larger one); counts its reads.
    #[derive(Default)]
    struct Items {
        reads: std::sync::atomic::AtomicUsize,
    }

    impl MediaReader for Items {
        fn read(&self, digest: &str) -> Option<Vec<u8>> {
            self.reads
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            match digest {
                "aa" => Some(b"png bytes".to_vec()),
                "cc" => Some(vec![7; 300]),
                _ => None,
            }
        }
    }

    fn images() -> (Arc<Items>, Images) {
        let items = Arc::new(Items::default());
        let reader: Arc<dyn MediaReader> = items.clone();
        (items, Images::new(reader))
    }

    fn request() -> ChatRequest {
        let parts = vec![
            MediaPart {
                digest: "aa".into(),
                mime: "image/png".into(),
            },
            MediaPart {
                digest: "bb".into(),
                mime: "image/jpeg".into(),
            },
            MediaPart {
                digest: "aa".into(),
                mime: "audio/ogg".into(),
            },
        ];
        ChatRequest::new(
            vec![
                Message::system("be brief"),
                Message::user("what is this?\n[image …]").with_media(parts),
            ],
            Vec::new(),
        )
    }

    #[test]
    fn a_vision_source_gets_the_images_and_no_source_gets_the_references() {
        let (_, images) = images();
        let shown = shown_to(request(), true, Some(&images));
        let user = &shown.messages[1];
        assert!(user.media.is_empty());
        // The missing item is left out; the audio item is not an image.
        assert_eq!(user.image_urls, ["data:image/png;base64,cG5nIGJ5dGVz"]);
        let wire = serde_json::to_value(user).expect("serialises");
        assert_eq!(wire["content"][0]["text"], "what is this?\n[image …]");
        assert_eq!(
            wire["content"][1]["image_url"]["url"],
            "data:image/png;base64,cG5nIGJ5dGVz"
        );
        assert!(wire.get("media").is_none());
        let back: Message = serde_json::from_value(wire).expect("reads back");
        assert_eq!(&back, user);

        for blind in [
            shown_to(request(), false, Some(&images)),
            shown_to(request(), true, None),
        ] {
            let user = &blind.messages[1];
            assert!(user.media.is_empty() && user.image_urls.is_empty());
            let wire = serde_json::to_value(user).expect("serialises");
            assert_eq!(wire["content"], "what is this?\n[image …]");
        }
    }

    /// A message that exists to show its media reaches a source that takes them, without the
    /// flag, and no other source; one whose images all fail to read is left out too.
    #[test]
    fn a_media_only_message_is_sent_only_with_its_images() {
        let (_, images) = images();
        let with_tool_media = |digest: &str| {
            let mut request = request();
            let mut carrier =
                Message::user("[media from camera follows]").with_media(vec![MediaPart {
                    digest: digest.into(),
                    mime: "image/png".into(),
                }]);
            carrier.media_only = true;
            request.messages.push(carrier);
            request
        };
        let seen = shown_to(with_tool_media("aa"), true, Some(&images));
        assert_eq!(seen.messages.len(), 3);
        assert_eq!(seen.messages[2].image_urls.len(), 1);
        assert!(!seen.messages[2].media_only);
        let wire = serde_json::to_value(&seen.messages[2]).expect("serialises");
        assert!(wire.get("media_only").is_none(), "{wire}");
        for blind in [
            shown_to(with_tool_media("aa"), false, Some(&images)),
            shown_to(with_tool_media("bb"), true, Some(&images)),
        ] {
            assert_eq!(blind.messages.len(), 2, "{:?}", blind.messages);
        }
        // A persisted frame keeps the flag.
        let mut carrier = Message::user("x");
        carrier.media_only = true;
        let back: Message =
            serde_json::from_value(serde_json::to_value(&carrier).expect("serialises"))
                .expect("reads back");
        assert!(back.media_only);
    }

    /// An image shown again comes from the recent URLs, not the store; past the budget the
    /// oldest is read again, and a URL larger than the whole budget is never kept.
    #[test]
    fn an_image_shown_again_is_not_read_again_within_the_budget() {
        let reads = |items: &Items| items.reads.load(std::sync::atomic::Ordering::Relaxed);
        let (items, images) = images();
        let first = shown_to(request(), true, Some(&images));
        let reads_once = reads(&items);
        let again = shown_to(request(), true, Some(&images));
        assert_eq!(first, again);
        // "bb" is missing: it is asked again, "aa" is not.
        assert_eq!(reads(&items), reads_once + 1);

        let items = Arc::new(Items::default());
        let reader: Arc<dyn MediaReader> = items.clone();
        let aa = images_url_len("aa", "image/png");
        let small = Images::with_budget(reader, aa + 10);
        let png = |digest: &str| small.data_url(digest, "image/png").expect("readable");
        png("aa");
        png("aa");
        assert_eq!(reads(&items), 1, "kept");
        png("cc");
        png("cc");
        assert_eq!(reads(&items), 3, "larger than the budget: read each time");
        png("aa");
        assert_eq!(reads(&items), 3, "still kept");
        assert_eq!(
            &*small.data_url("aa", "image/jpeg").expect("readable"),
            "data:image/jpeg;base64,cG5nIGJ5dGVz",
            "another type is another URL"
        );
        png("aa");
        assert_eq!(reads(&items), 5, "the jpeg URL pushed the png one out");
    }

    fn images_url_len(digest: &str, mime: &str) -> usize {
        let (_, images) = images();
        images.data_url(digest, mime).expect("readable").len()
    }

    #[test]
    fn references_survive_a_persisted_frame() {
        let user = &request().messages[1];
        let wire = serde_json::to_value(user).expect("serialises");
        assert_eq!(wire["media"][0]["digest"], "aa");
        let back: Message = serde_json::from_value(wire).expect("reads back");
        assert_eq!(&back, user);
    }
}
