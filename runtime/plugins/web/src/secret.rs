//! Secrets: password hashes (PBKDF2-HMAC-SHA256), random tokens, stateless session and CSRF
//! tokens (HMAC over the expiry), and constant-time comparison.

use std::num::NonZeroU32;

use ring::rand::{SecureRandom, SystemRandom};
use ring::{hmac, pbkdf2};
use subtle::ConstantTimeEq;

/// PBKDF2 rounds: about 0.1 s on a small board, which is what a login may cost.
const ROUNDS: u32 = 100_000;
const HASH_LEN: usize = 32;

/// `n` random bytes as lowercase hex.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    SystemRandom::new()
        .fill(&mut bytes)
        .expect("the system's random source works");
    hex(&bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// `pbkdf2-sha256$ROUNDS$SALT$HASH` of `password`.
pub fn hash_password(password: &str) -> String {
    let salt = random_hex(16);
    let mut out = [0u8; HASH_LEN];
    let rounds = NonZeroU32::new(ROUNDS).expect("non-zero");
    pbkdf2::derive(
        pbkdf2::PBKDF2_HMAC_SHA256,
        rounds,
        salt.as_bytes(),
        password.as_bytes(),
        &mut out,
    );
    format!("pbkdf2-sha256${ROUNDS}${salt}${}", hex(&out))
}

/// Whether `password` matches `stored` (constant time in the hash).
pub fn verify_password(stored: &str, password: &str) -> bool {
    let mut parts = stored.split('$');
    let (Some("pbkdf2-sha256"), Some(rounds), Some(salt), Some(hash), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return false;
    };
    let (Some(rounds), Some(hash)) = (rounds.parse().ok().and_then(NonZeroU32::new), unhex(hash))
    else {
        return false;
    };
    pbkdf2::verify(
        pbkdf2::PBKDF2_HMAC_SHA256,
        rounds,
        salt.as_bytes(),
        password.as_bytes(),
        &hash,
    )
    .is_ok()
}

/// Whether two secrets are equal, in time independent of where they differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// Signs and checks session and CSRF tokens with one key: a session is `EXPIRY.MAC`, valid
/// until its expiry (seconds since the epoch); its CSRF token is a MAC of the session token.
/// Nothing is stored, so sessions survive a restart of the web process; changing the key (a new
/// password) ends them all.
pub struct Signer {
    key: hmac::Key,
}

impl Signer {
    /// A signer over `secret` (hex or any text).
    pub fn new(secret: &str) -> Signer {
        Signer {
            key: hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes()),
        }
    }

    fn mac(&self, what: &str) -> String {
        hex(hmac::sign(&self.key, what.as_bytes()).as_ref())
    }

    /// A session token valid until `expiry`.
    pub fn session(&self, expiry: u64) -> String {
        let body = format!("{expiry}");
        format!("{body}.{}", self.mac(&format!("session:{body}")))
    }

    /// Whether `token` is a session this key signed that is still valid at `now`.
    pub fn session_valid(&self, token: &str, now: u64) -> bool {
        let Some((body, mac)) = token.split_once('.') else {
            return false;
        };
        let Ok(expiry) = body.parse::<u64>() else {
            return false;
        };
        same(mac, &self.mac(&format!("session:{body}"))) && now < expiry
    }

    /// The CSRF token of session `token`.
    pub fn csrf(&self, token: &str) -> String {
        self.mac(&format!("csrf:{token}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_verifies_and_a_wrong_one_or_a_tampered_hash_does_not() {
        let stored = hash_password("correct horse");
        assert!(verify_password(&stored, "correct horse"));
        assert!(!verify_password(&stored, "correct horsf"));
        assert!(!verify_password(
            &stored.replace("pbkdf2", "md5"),
            "correct horse"
        ));
        assert_ne!(stored, hash_password("correct horse"), "salted");
    }

    #[test]
    fn sessions_expire_and_are_bound_to_the_key() {
        let signer = Signer::new("k1");
        let token = signer.session(100);
        assert!(signer.session_valid(&token, 99));
        assert!(!signer.session_valid(&token, 100));
        assert!(!Signer::new("k2").session_valid(&token, 1));
        assert!(!signer.session_valid(&token.replace("100.", "999."), 1));
        assert_ne!(signer.csrf(&token), signer.csrf(&signer.session(101)));
    }

    #[test]
    fn same_compares_whole_strings() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "abcd"));
    }
}
