//! What a request's media become for one source: the items' bytes as data URLs for a source
//! that takes images, nothing for one that does not (the message's text already carries a
//! marker line per item). Either way Hearth's own `media` references never leave the process.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::request::ChatRequest;

/// Reads an item of the media store by digest, its bytes checked against the digest; `None`
/// when the item is missing or damaged (the message then goes without it, its marker says
/// what it was).
pub trait MediaReader: Send + Sync {
    /// The item's bytes.
    fn read(&self, digest: &str) -> Option<Vec<u8>>;
}

/// `request` as a source sees it: with `vision` and a `reader`, each image a message refers
/// to becomes an `image_url` part holding a data URL of its bytes; every media reference is
/// removed. Only images are sent: audio and other files stay markers.
pub fn shown_to(
    request: &ChatRequest,
    vision: bool,
    reader: Option<&dyn MediaReader>,
) -> ChatRequest {
    let mut request = request.clone();
    for message in &mut request.messages {
        for part in std::mem::take(&mut message.media) {
            let (true, Some(reader)) = (vision, reader) else {
                continue;
            };
            if !part.mime.starts_with("image/") {
                continue;
            }
            match reader.read(&part.digest) {
                Some(bytes) => message.image_urls.push(format!(
                    "data:{};base64,{}",
                    part.mime,
                    STANDARD.encode(bytes)
                )),
                None => tracing::warn!(
                    digest = %part.digest,
                    "an image of the request could not be read from the media store; sent without it"
                ),
            }
        }
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{MediaPart, Message};

    struct Items;

    impl MediaReader for Items {
        fn read(&self, digest: &str) -> Option<Vec<u8>> {
            (digest == "aa").then(|| b"png bytes".to_vec())
        }
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
        let shown = shown_to(&request(), true, Some(&Items));
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
            shown_to(&request(), false, Some(&Items)),
            shown_to(&request(), true, None),
        ] {
            let user = &blind.messages[1];
            assert!(user.media.is_empty() && user.image_urls.is_empty());
            let wire = serde_json::to_value(user).expect("serialises");
            assert_eq!(wire["content"], "what is this?\n[image …]");
        }
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
