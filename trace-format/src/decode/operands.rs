//! The addresses of one block execution's memory operands (§6.3): each is
//! its prediction plus the difference the record gives (none for a record
//! without addresses), a conditional operand's difference saying whether it
//! is present.

use super::Core;
use crate::block_table::{BlockId, Operand};
use crate::error::DecodeError;
use crate::event::Access;
use crate::varint::{unzigzag, Cursor};

impl Core<'_> {
    /// Decodes the addresses of block `id`'s operands `ops` into
    /// `accesses`; returns how many are present. Up to the first present
    /// operand there is no previous one, and after it there always is: two
    /// loops, so that neither tests for it (as the encoder does).
    #[inline(always)]
    pub(super) fn operands(
        &mut self,
        id: BlockId,
        ops: &[Operand],
        has_addr: bool,
        cur: &mut Cursor<'_>,
    ) -> Result<usize, DecodeError> {
        let acc = &mut self.accesses[..ops.len()];
        let mut j = 0;
        let mut prev = loop {
            let Some(op) = ops.get(j) else {
                return Ok(0);
            };
            let Some(delta) = Self::delta(op, has_addr, cur)? else {
                j += 1;
                continue;
            };
            let a = self.pred.resolve(id, j as u32, delta, None);
            acc[0] = access(j, op, a);
            break a;
        };
        let mut k = 1;
        for (j, op) in ops.iter().enumerate().skip(j + 1) {
            let Some(delta) = Self::delta(op, has_addr, cur)? else {
                continue;
            };
            let a = self.pred.resolve(id, j as u32, delta, Some(prev));
            acc[k] = access(j, op, a);
            prev = a;
            k += 1;
        }
        Ok(k)
    }

    /// The difference between operand `op`'s address and its prediction,
    /// `None` for a conditional operand the record says is absent.
    #[inline(always)]
    fn delta(
        op: &Operand,
        has_addr: bool,
        cur: &mut Cursor<'_>,
    ) -> Result<Option<u64>, DecodeError> {
        if !has_addr {
            return Ok(Some(0));
        }
        let v = cur.varint()?;
        Ok(match (op.conditional, v) {
            (true, 0) => None,
            (true, v) => Some(unzigzag(v - 1) as u64),
            (false, v) => Some(unzigzag(v) as u64),
        })
    }
}

/// Operand `j`'s access at `a`.
#[inline(always)]
pub(super) fn access(j: usize, op: &Operand, a: u64) -> Access {
    Access {
        operand: j as u16,
        size: op.size,
        write: op.write,
        addr: a,
    }
}
