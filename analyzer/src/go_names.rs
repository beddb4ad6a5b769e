//! Function names of Go programs, from the table the Go runtime keeps for
//! its own stack traces (the pclntab).
//!
//! Debian strips its Go programs' symbol tables, so without this their code
//! would be named `module+0xoffset`. Every Go program keeps, for its runtime,
//! a table of its functions' entries and names: in the `.gopclntab` section,
//! or, in a position-independent program linked by the system linker (as
//! Debian builds them), inside `.data.rel.ro` without a section of its own,
//! found by its header. The table's layout of Go 1.16 and later is read
//! (header magic `0xfffffffa`, `0xfffffff0`, `0xfffffff1`); a table that does
//! not hold together (an entry outside the program's code, a name outside
//! the table) names nothing.

use object::{Object, ObjectSection, SectionKind};

/// The functions of a Go program, by their entries in the file, sorted.
#[derive(Debug, Default)]
pub struct GoFunctions {
    functions: Vec<(u64, String)>,
    /// Where the last function ends (the table's end entry).
    end: u64,
}

impl GoFunctions {
    /// The functions of the ELF file `data`; none when it is not a Go
    /// program of Go 1.16 or later.
    ///
    /// ```
    /// use tf_analyzer::go_names::GoFunctions;
    /// let sh = std::fs::read("/bin/sh").unwrap();
    /// assert!(GoFunctions::read(&sh).is_empty());
    /// ```
    pub fn read(data: &[u8]) -> GoFunctions {
        let Ok(file) = object::File::parse(data) else {
            return GoFunctions::default();
        };
        let text = file.section_by_name(".text").map(|s| s.address());
        let code = (file.sections())
            .filter(|s| s.kind() == SectionKind::Text)
            .map(|s| (s.address(), s.address() + s.size()))
            .fold((u64::MAX, 0), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)));
        let candidates = (file.sections())
            .filter(|s| s.name() == Ok(".gopclntab"))
            .chain(
                (file.sections())
                    .filter(|s| matches!(s.name(), Ok(".data.rel.ro" | ".rodata" | ".noptrdata"))),
            );
        for section in candidates {
            let Ok(bytes) = section.data() else { continue };
            let whole = section.name() == Ok(".gopclntab");
            let mut at = 0;
            while let Some(k) = find_header(&bytes[at..]) {
                let table = &bytes[at + k..];
                if let Some(found) = parse(table, text, code) {
                    return found;
                }
                if whole {
                    break;
                }
                at += k + 4;
            }
        }
        GoFunctions::default()
    }

    /// The entries (file addresses) of the functions named `name`.
    ///
    /// ```
    /// let f = tf_analyzer::go_names::GoFunctions::default();
    /// assert_eq!(f.entries("main.main").count(), 0);
    /// ```
    pub fn entries<'a>(&'a self, name: &'a str) -> impl Iterator<Item = u64> + 'a {
        (self.functions.iter())
            .filter(move |f| f.1 == name)
            .map(|f| f.0)
    }

    /// Whether no function was found.
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }

    /// The name of the code at `addr` (a file address): its function's
    /// name, with `+0xoffset` when `addr` is not the entry.
    ///
    /// ```
    /// let f = tf_analyzer::go_names::GoFunctions::default();
    /// assert_eq!(f.name(0x1000), None);
    /// ```
    pub fn name(&self, addr: u64) -> Option<String> {
        if addr >= self.end {
            return None;
        }
        let k = self
            .functions
            .partition_point(|f| f.0 <= addr)
            .checked_sub(1)?;
        let (entry, name) = &self.functions[k];
        Some(match addr - entry {
            0 => name.clone(),
            off => format!("{name}+{off:#x}"),
        })
    }
}

/// Magic numbers of the tables read: Go 1.16–1.17, 1.18–1.19, 1.20 and
/// later.
const MAGICS: [u32; 3] = [0xffff_fffa, 0xffff_fff0, 0xffff_fff1];

/// Where the next table header starts in `bytes`: a magic, two zero bytes,
/// an instruction size quantum of 1 and 8-byte pointers (x86-64).
fn find_header(bytes: &[u8]) -> Option<usize> {
    (bytes.windows(8)).position(|w| {
        let magic = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        MAGICS.contains(&magic) && w[4..] == [0, 0, 1, 8]
    })
}

/// The functions of the table at the start of `t`, given the address of the
/// `.text` section (for a table that does not give it) and the range of the
/// program's code; `None` when the table does not hold together.
fn parse(t: &[u8], text: Option<u64>, code: (u64, u64)) -> Option<GoFunctions> {
    let word = |k: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            t.get(8 + 8 * k..16 + 8 * k)?.try_into().ok()?,
        ))
    };
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(t.get(at..at + 4)?.try_into().ok()?))
    };
    let go116 = u32_at(0)? == MAGICS[0];
    let nfunc = usize::try_from(word(0)?).ok()?;
    // Go 1.18 added textStart after nfiles; entries are offsets from it.
    let (text_start, names, pcln) = if go116 {
        (0, word(2)?, word(6)?)
    } else {
        let start = match word(2)? {
            0 => text?,
            s => s,
        };
        (start, word(3)?, word(7)?)
    };
    let (names, pcln) = (usize::try_from(names).ok()?, usize::try_from(pcln).ok()?);
    if nfunc == 0 || nfunc > t.len() / 8 {
        return None;
    }
    // functab: nfunc + 1 pairs (entry, offset of the function's record from
    // functab), 8-byte words before 1.18, 4-byte after.
    let pair = if go116 { 16 } else { 8 };
    let entry_of = |k: usize| -> Option<(u64, usize)> {
        let at = pcln + k * pair;
        Some(if go116 {
            let e = u64::from_le_bytes(t.get(at..at + 8)?.try_into().ok()?);
            let off = u64::from_le_bytes(t.get(at + 8..at + 16)?.try_into().ok()?);
            (e, usize::try_from(off).ok()?)
        } else {
            (
                text_start + u64::from(u32_at(at)?),
                u32_at(at + 4)? as usize,
            )
        })
    };
    let in_code = |a: u64| a >= code.0 && a <= code.1;
    let mut functions = Vec::with_capacity(nfunc);
    for k in 0..nfunc {
        let (entry, record) = entry_of(k)?;
        // the record: its entry (a word before 1.18, an offset after), then
        // the offset of its name in the name table
        let name_field = pcln + record + if go116 { 8 } else { 4 };
        let name_off = usize::try_from(i32::from_le_bytes(
            t.get(name_field..name_field + 4)?.try_into().ok()?,
        ))
        .ok()?;
        let name = t.get(names.checked_add(name_off)?..)?;
        let name = &name[..name.iter().position(|&b| b == 0)?];
        if !in_code(entry) || name.is_empty() {
            return None;
        }
        functions.push((entry, String::from_utf8_lossy(name).into_owned()));
    }
    let (end, _) = entry_of(nfunc)?;
    let sorted = functions.windows(2).all(|w| w[0].0 <= w[1].0);
    (sorted && in_code(end) && functions.last()?.0 <= end).then_some(GoFunctions { functions, end })
}

#[cfg(test)]
#[path = "go_names_tests.rs"]
mod tests;
