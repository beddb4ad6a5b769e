//! Errors of the reader and the writer.
//!
//! Every error displays as one line that names the file it concerns and, for
//! damage inside a chunked stream, the byte offset of the damaged chunk:
//!
//! ```text
//! trace/thread-3.tfc: byte 1048624: chunk checksum mismatch
//! ```

use std::fmt;
use std::io;

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Anything that can go wrong reading or writing a trace.
///
/// ```
/// # fn main() {
/// match tf_trace::Trace::open("/no/such/trace") {
///     Err(e) => assert!(e.to_string().starts_with("/no/such/trace")),
///     Ok(_) => unreachable!(),
/// }
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The operating system refused a read or a write.
    #[error("{file}: {source}")]
    Io {
        /// The file or directory concerned.
        file: String,
        /// What the operating system said.
        #[source]
        source: io::Error,
    },
    /// The 32-byte header of a chunked stream is wrong (§4.1).
    #[error("{file}: bad file header: {what}")]
    Header {
        /// The file concerned.
        file: String,
        /// Which field is wrong, and how.
        what: String,
    },
    /// A chunk is damaged: the reader stopped there (§4.2).
    #[error("{file}: byte {offset}: {damage}")]
    Chunk {
        /// The file concerned.
        file: String,
        /// Byte offset of the damaged chunk in the file.
        offset: u64,
        /// What is wrong with it.
        damage: Damage,
    },
    /// The manifest cannot be read or written (§7).
    #[error("{file}: {what}")]
    Manifest {
        /// The manifest file.
        file: String,
        /// What is wrong.
        what: String,
    },
    /// A part of the trace that should be there is not (§2).
    #[error("{file}: {what}")]
    Missing {
        /// The file or directory concerned.
        file: String,
        /// What is missing.
        what: String,
    },
    /// A thread id that the trace does not contain.
    #[error("{dir}: no thread {tid} in the trace")]
    NoThread {
        /// The trace directory.
        dir: String,
        /// The thread id asked for.
        tid: u64,
    },
    /// A writer was asked for something the format cannot express, or was
    /// used wrongly (an unknown block id, the wrong number of addresses, …).
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    pub(crate) fn io(file: impl fmt::Display, source: io::Error) -> Error {
        Error::Io {
            file: file.to_string(),
            source,
        }
    }

    pub(crate) fn header(file: impl fmt::Display, what: impl Into<String>) -> Error {
        Error::Header {
            file: file.to_string(),
            what: what.into(),
        }
    }

    /// The byte offset of the damaged chunk, for [`Error::Chunk`].
    ///
    /// ```
    /// use tf_trace::{Damage, Error};
    /// let e = Error::Chunk { file: "t/thread-1.tfc".into(), offset: 48, damage: Damage::Checksum };
    /// assert_eq!(e.chunk_offset(), Some(48));
    /// assert_eq!(e.to_string(), "t/thread-1.tfc: byte 48: chunk checksum mismatch");
    /// ```
    pub fn chunk_offset(&self) -> Option<u64> {
        match self {
            Error::Chunk { offset, .. } => Some(*offset),
            _ => None,
        }
    }
}

/// What is wrong with a damaged chunk.
///
/// ```
/// use tf_trace::Damage;
/// assert_eq!(Damage::Magic.to_string(), "bad chunk magic (not TFCK)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// The chunk does not start with `TFCK`.
    Magic,
    /// The 16-byte chunk header is cut short by the end of the file.
    TruncatedHeader {
        /// How many header bytes the file has.
        have: u64,
    },
    /// `length` is 0 or above 64 MiB.
    Length(u32),
    /// The payload runs past the end of the file.
    Truncated {
        /// Payload length the header announces.
        length: u32,
        /// Payload bytes the file has.
        have: u64,
    },
    /// The CRC-32C does not match.
    Checksum,
    /// `seq` is not the next chunk number.
    Seq {
        /// The sequence number expected here.
        expected: u32,
        /// The one found.
        found: u32,
    },
    /// The payload passed its checksum but does not decode.
    Decode(DecodeError),
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Damage::Magic => write!(f, "bad chunk magic (not TFCK)"),
            Damage::TruncatedHeader { have } => {
                write!(
                    f,
                    "chunk header cut short ({have} of 16 bytes): truncated file"
                )
            }
            Damage::Length(n) => write!(f, "chunk length {n} out of range 1..=67108864"),
            Damage::Truncated { length, have } => write!(
                f,
                "chunk payload cut short ({have} of {length} bytes): truncated file"
            ),
            Damage::Checksum => write!(f, "chunk checksum mismatch"),
            Damage::Seq { expected, found } => {
                write!(f, "chunk sequence number {found}, expected {expected}")
            }
            Damage::Decode(e) => write!(f, "chunk does not decode: {e}"),
        }
    }
}

/// A payload that does not decode: where (byte offset in the payload) and why.
///
/// ```
/// use tf_trace::DecodeError;
/// let e = DecodeError { pos: 17, what: "varint longer than 10 bytes".into() };
/// assert_eq!(e.to_string(), "payload byte 17: varint longer than 10 bytes");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset in the payload of the record that does not decode.
    pub pos: usize,
    /// What is wrong.
    pub what: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "payload byte {}: {}", self.pos, self.what)
    }
}

impl std::error::Error for DecodeError {}

impl DecodeError {
    pub(crate) fn new(pos: usize, what: impl Into<String>) -> DecodeError {
        DecodeError {
            pos,
            what: what.into(),
        }
    }
}
