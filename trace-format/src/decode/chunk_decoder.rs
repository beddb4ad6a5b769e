//! Decoding chunk payloads one by one, outside a file reader.

use super::Core;
use crate::block_table::BlockTable;
use crate::error::DecodeError;
use crate::event::Event;
use crate::stream::TableParams;
use crate::ChunkStats;

/// Decodes single chunk payloads of one thread stream, e.g. in parallel
/// (one decoder per worker). Every chunk is self-contained (§4.2).
///
/// ```no_run
/// # fn main() -> tf_trace::Result<()> {
/// let trace = tf_trace::Trace::open("trace")?;
/// let mut chunks = trace.chunks(1)?;
/// let mut decoder = tf_trace::ChunkDecoder::new(trace.blocks(), chunks.header().params);
/// while let Some(chunk) = chunks.next_chunk() {
///     let chunk = chunk?.to_owned(); // could be sent to another thread
///     let mut events = decoder.decode(&chunk.payload).expect("damaged chunk");
///     while let Some(ev) = events.next_event() {
///         println!("{:?}", ev.unwrap());
///     }
/// }
/// # Ok(()) }
/// ```
pub struct ChunkDecoder<'t> {
    core: Core<'t>,
}

impl<'t> ChunkDecoder<'t> {
    /// A decoder for chunks of a stream with these table parameters (from
    /// its [`StreamHeader`](crate::StreamHeader)); panics if they are out of range.
    pub fn new(blocks: &'t BlockTable, params: TableParams) -> ChunkDecoder<'t> {
        params.check().expect("table parameters out of range");
        ChunkDecoder {
            core: Core::new(blocks, params),
        }
    }

    /// Checks that `payload` decodes and counts what it holds (without
    /// computing addresses). `offset` and `seq` of the result are 0.
    pub fn stats(&mut self, payload: &[u8]) -> Result<ChunkStats, DecodeError> {
        self.core.validate(payload)
    }

    /// Checks that `payload` decodes, then returns its events. Nothing is
    /// returned from a payload that does not decode.
    pub fn decode<'c>(&'c mut self, payload: &'c [u8]) -> Result<ChunkEvents<'c, 't>, DecodeError> {
        self.core.validate(payload)?;
        Ok(ChunkEvents {
            core: &mut self.core,
            payload,
        })
    }
}

/// The events of one chunk (see [`ChunkDecoder::decode`]).
pub struct ChunkEvents<'c, 't> {
    core: &'c mut Core<'t>,
    payload: &'c [u8],
}

impl ChunkEvents<'_, '_> {
    /// The next event; `None` at the end of the chunk. Events borrow the
    /// decoder until the next call.
    #[inline]
    pub fn next_event(&mut self) -> Option<Result<Event<'_>, DecodeError>> {
        match self.core.step::<true, false>(self.payload) {
            Ok(step) => self.core.event(step, self.payload).map(Ok),
            Err(e) => Some(Err(e)),
        }
    }
}
