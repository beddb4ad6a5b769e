//! Stage 6: batching units into warps (`--batch`).
//!
//! | policy | warps hold |
//! |---|---|
//! | `consecutive` (default) | units in order (thread creation, then time): lanes 0..W−1 get units 0..W−1, as consecutive GPU thread ids get consecutive work items |
//! | `by-function` | units of the same function only: units are grouped by the function of their bottom frame (in order of first appearance), then batched consecutively within each group |
//! | `by-length` | units of similar length: units sorted by traced instructions (longest first), then batched consecutively; a bound on what balancing the work per warp would gain |
//!
//! ```
//! use tf_analyzer::warps::Batch;
//! let lengths = [5u64, 100, 7, 90];
//! let roots = [1u64, 2, 1, 2];
//! let w = Batch::ByFunction.warps(4, 2, |i| roots[i], |i| lengths[i]);
//! assert_eq!(w, [vec![0, 2], vec![1, 3]]);
//! let w = Batch::ByLength.warps(4, 2, |i| roots[i], |i| lengths[i]);
//! assert_eq!(w, [vec![1, 3], vec![2, 0]]);
//! ```

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// A batching policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Batch {
    /// Units in order.
    #[default]
    Consecutive,
    /// Units of one function per warp.
    ByFunction,
    /// Units sorted by length.
    ByLength,
}

impl FromStr for Batch {
    type Err = String;
    fn from_str(s: &str) -> Result<Batch, String> {
        match s {
            "consecutive" => Ok(Batch::Consecutive),
            "by-function" => Ok(Batch::ByFunction),
            "by-length" => Ok(Batch::ByLength),
            _ => Err(format!(
                "--batch {s}: expected consecutive, by-function or by-length"
            )),
        }
    }
}

impl fmt::Display for Batch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Batch::Consecutive => "consecutive",
            Batch::ByFunction => "by-function",
            Batch::ByLength => "by-length",
        })
    }
}

impl Batch {
    /// Splits units `0..n` into warps of at most `width` lanes; `root(i)` is
    /// unit `i`'s function and `len(i)` its length.
    pub fn warps(
        self,
        n: usize,
        width: usize,
        root: impl Fn(usize) -> u64,
        len: impl Fn(usize) -> u64,
    ) -> Vec<Vec<usize>> {
        let width = width.max(1);
        match self {
            Batch::Consecutive => chunk((0..n).collect(), width),
            Batch::ByLength => {
                let mut order: Vec<usize> = (0..n).collect();
                order.sort_by_key(|&i| std::cmp::Reverse(len(i)));
                chunk(order, width)
            }
            Batch::ByFunction => {
                let mut groups: Vec<Vec<usize>> = Vec::new();
                let mut index: HashMap<u64, usize> = HashMap::new();
                for i in 0..n {
                    let g = *index.entry(root(i)).or_insert_with(|| {
                        groups.push(Vec::new());
                        groups.len() - 1
                    });
                    groups[g].push(i);
                }
                groups.into_iter().flat_map(|g| chunk(g, width)).collect()
            }
        }
    }
}

fn chunk(order: Vec<usize>, width: usize) -> Vec<Vec<usize>> {
    order.chunks(width).map(<[usize]>::to_vec).collect()
}
