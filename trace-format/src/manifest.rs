//! The manifest (§7): a MessagePack map summarizing the trace.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A name or path: bytes, normally UTF-8. Read from MessagePack `str` or
/// `bin`, written as `bin`.
///
/// ```
/// let b = tf_trace::ByteString::from("/bin/ls");
/// assert_eq!(b.as_bytes(), b"/bin/ls");
/// assert_eq!(b.to_string(), "/bin/ls");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ByteString(pub Vec<u8>);

impl ByteString {
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl From<&str> for ByteString {
    fn from(s: &str) -> Self {
        ByteString(s.as_bytes().to_vec())
    }
}

impl From<&[u8]> for ByteString {
    fn from(s: &[u8]) -> Self {
        ByteString(s.to_vec())
    }
}

impl fmt::Display for ByteString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0))
    }
}

impl fmt::Debug for ByteString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.0))
    }
}

impl Serialize for ByteString {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for ByteString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ByteString;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a str or bin")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteString, E> {
                Ok(ByteString(v.as_bytes().to_vec()))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<ByteString, E> {
                Ok(ByteString(v.to_vec()))
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<ByteString, E> {
                Ok(ByteString(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<ByteString, A::Error> {
                let mut v = Vec::new();
                while let Some(b) = a.next_element::<u8>()? {
                    v.push(b);
                }
                Ok(ByteString(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// Per-thread summary in the manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ThreadSummary {
    /// Thread id.
    pub tid: u64,
    /// Parent thread id, 0 = none.
    pub parent: u64,
    /// Lowest stack address.
    pub stack_lo: u64,
    /// One past the highest stack address.
    pub stack_hi: u64,
    /// Start routine, 0 = unknown.
    pub start_routine: u64,
    /// Instructions in the thread's stream.
    pub traced_instructions: u64,
    /// Instructions reported by its `skip` events.
    pub skipped_instructions: u64,
}

/// Per-module summary in the manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModuleSummary {
    /// Module id (as in the block table).
    pub id: u64,
    /// Path.
    pub path: ByteString,
    /// Lowest mapped address.
    pub base: u64,
    /// Bytes mapped.
    pub size: u64,
    /// Build id.
    pub build_id: ByteString,
}

/// The manifest of §7. Missing keys take their defaults, unknown keys are
/// ignored.
///
/// ```
/// let mut m = tf_trace::Manifest::default();
/// m.command = vec!["pigz".into(), "big.tar".into()];
/// m.complete = true;
/// let bytes = m.to_bytes();
/// let back = tf_trace::Manifest::from_bytes(&bytes).unwrap();
/// assert_eq!(back, m);
/// assert_eq!(back.format, "tf-trace");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Manifest {
    /// `"tf-trace"`.
    pub format: String,
    /// Format version (FORMAT.md §8).
    pub version: u64,
    /// E.g. `"tf-valgrind"`.
    pub tracer: String,
    /// Version of the tracer.
    pub tracer_version: String,
    /// E.g. `"valgrind-3.19.0"`.
    pub backend: String,
    /// The program and its arguments.
    pub command: Vec<ByteString>,
    /// Working directory.
    pub cwd: ByteString,
    /// Process id.
    pub pid: u64,
    /// Unix time in seconds.
    pub start_time: u64,
    /// `--only` functions.
    pub only: Vec<String>,
    /// `--exclude` functions.
    pub exclude: Vec<String>,
    /// The tracer finished normally.
    pub complete: bool,
    /// The program's exit status, if it exited.
    pub exit_code: Option<i64>,
    /// The signal that killed it, if one did.
    pub exit_signal: Option<i64>,
    /// The tracer writes `loop_chunk` and `static_loop` events (§6.6, §6.7)
    /// for the OpenMP worksharing loops the program runs. False: it cannot,
    /// and their absence does not mean there were none (default true: the
    /// traces written before this key are the Valgrind tool's, which does).
    pub worksharing: bool,
    /// Processes the program started (fork, vfork), which the trace does
    /// not follow: their work is in no thread stream.
    pub forked: u64,
    /// The command of the `execve` that replaced the program (empty: none).
    /// The trace ends there: what the new program ran is not in it.
    pub exec: Vec<ByteString>,
    /// Per thread.
    pub threads: Vec<ThreadSummary>,
    /// Per module.
    pub modules: Vec<ModuleSummary>,
    /// Sum over threads.
    pub traced_instructions: u64,
    /// Sum over threads.
    pub skipped_instructions: u64,
    /// Blocks in the block table.
    pub blocks: u64,
}

impl Default for Manifest {
    fn default() -> Self {
        Manifest {
            format: "tf-trace".into(),
            version: crate::stream::VERSION as u64,
            tracer: String::new(),
            tracer_version: String::new(),
            backend: String::new(),
            command: Vec::new(),
            cwd: ByteString::default(),
            pid: 0,
            start_time: 0,
            only: Vec::new(),
            exclude: Vec::new(),
            complete: false,
            exit_code: None,
            exit_signal: None,
            worksharing: true,
            forked: 0,
            exec: Vec::new(),
            threads: Vec::new(),
            modules: Vec::new(),
            traced_instructions: 0,
            skipped_instructions: 0,
            blocks: 0,
        }
    }
}

impl Manifest {
    /// Encodes as a MessagePack map with string keys.
    pub fn to_bytes(&self) -> Vec<u8> {
        rmp_serde::to_vec_named(self).expect("a manifest always serializes")
    }

    /// Decodes a manifest; rejects an unknown major version.
    ///
    /// ```
    /// // {"version": 1}
    /// let e = tf_trace::Manifest::from_bytes(&[0x81, 0xa7, b'v', b'e', b'r', b's', b'i', b'o', b'n', 1]);
    /// assert_eq!(e.unwrap_err(), "manifest version 1, this reader knows 2 to 4");
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Manifest, String> {
        let m: Manifest =
            rmp_serde::from_slice(bytes).map_err(|e| format!("manifest does not decode: {e}"))?;
        let (oldest, newest) = (crate::stream::OLDEST_VERSION, crate::stream::VERSION);
        if !(u64::from(oldest)..=u64::from(newest)).contains(&m.version) {
            return Err(format!(
                "manifest version {}, this reader knows {oldest} to {newest}",
                m.version
            ));
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map written by hand: str and bin forms, an unknown key, a nil.
    #[test]
    fn str_or_bin_defaults_and_unknown_keys() {
        let mut b = Vec::new();
        rmp::encode::write_map_len(&mut b, 5).unwrap();
        rmp::encode::write_str(&mut b, "command").unwrap();
        rmp::encode::write_array_len(&mut b, 2).unwrap();
        rmp::encode::write_str(&mut b, "ls").unwrap();
        rmp::encode::write_bin(&mut b, b"-l\xff").unwrap();
        rmp::encode::write_str(&mut b, "cwd").unwrap();
        rmp::encode::write_bin(&mut b, b"/tmp").unwrap();
        rmp::encode::write_str(&mut b, "some_future_key").unwrap();
        rmp::encode::write_array_len(&mut b, 1).unwrap();
        rmp::encode::write_uint(&mut b, 7).unwrap();
        rmp::encode::write_str(&mut b, "exit_code").unwrap();
        rmp::encode::write_nil(&mut b).unwrap();
        rmp::encode::write_str(&mut b, "exit_signal").unwrap();
        rmp::encode::write_sint(&mut b, 11).unwrap();
        let m = Manifest::from_bytes(&b).unwrap();
        assert_eq!(
            m.command,
            vec![ByteString::from("ls"), ByteString(b"-l\xff".to_vec())]
        );
        assert_eq!(m.cwd.as_bytes(), b"/tmp");
        assert_eq!(m.exit_code, None);
        assert_eq!(m.exit_signal, Some(11));
        assert!(!m.complete);
        assert_eq!(m.version, 4);
        assert!(m.only.is_empty() && m.threads.is_empty());
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(Manifest::from_bytes(b"\xc1").is_err());
        assert!(Manifest::from_bytes(&[0x81, 0xa3, b'p', b'i', b'd', 0xa1, b'x']).is_err());
    }
}
