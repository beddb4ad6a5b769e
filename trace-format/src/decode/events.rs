//! Event records (§6.4) in the chunk decoder: every event is lent as it
//! is, and a partial event goes on to the block record it qualifies.

use super::{Core, Step};
use crate::error::DecodeError;
use crate::event::{self, Event};
use crate::varint::Cursor;

impl Core<'_> {
    /// The event record with header `h` at `rpos`; a partial event goes on
    /// to the block record it qualifies.
    #[inline(always)]
    pub(super) fn event_record<const ADDR: bool, const COUNT: bool>(
        &mut self,
        h: u64,
        rpos: usize,
        cur: &mut Cursor<'_>,
    ) -> Result<Step, DecodeError> {
        let ty = h >> 2;
        let body = cur.bytes()?;
        if ty == event::PARTIAL {
            return self.partial_record::<ADDR, COUNT>(body, rpos, cur);
        }
        self.pos = cur.pos();
        if COUNT {
            self.stats.events += 1;
        }
        match event::decode(ty, body, rpos)? {
            Some(e) => {
                if let (true, Event::Skip { count, .. }) = (COUNT, e) {
                    self.stats.skipped_insns = self.stats.skipped_insns.saturating_add(count);
                }
                self.event = e;
                Ok(Step::Event)
            }
            None => {
                if COUNT {
                    self.stats.unknown_events += 1;
                }
                self.unknown = (ty, self.pos - body.len(), self.pos);
                Ok(Step::Unknown)
            }
        }
    }

    /// A partial event (`body` at `rpos`) and the block record that must
    /// follow it. Rare (a fault, a thread's end), so kept out of the way of
    /// complete executions.
    #[inline(never)]
    #[cold]
    fn partial_record<const ADDR: bool, const COUNT: bool>(
        &mut self,
        body: &[u8],
        rpos: usize,
        cur: &mut Cursor<'_>,
    ) -> Result<Step, DecodeError> {
        let mut c = Cursor::new(body);
        let bad = |_| DecodeError::new(rpos, "partial event: payload too short");
        let ni = c.varint().map_err(bad)?;
        let no = c.varint().map_err(bad)?;
        if !c.is_empty() {
            return Err(DecodeError::new(
                rpos,
                "partial event: bytes left over in payload",
            ));
        }
        if cur.is_empty() {
            return Err(DecodeError::new(
                rpos,
                "partial event at the end of the chunk",
            ));
        }
        let next = cur.pos();
        let h = cur.varint()?;
        match h & 3 {
            0 => self.block_record::<ADDR, COUNT>(h, next, Some((ni, no, rpos)), cur),
            2 => {
                cur.bytes()?;
                Err(DecodeError::new(
                    rpos,
                    "partial event not followed by a block record",
                ))
            }
            _ => Err(DecodeError::new(rpos, "partial event followed by a run")),
        }
    }
}
