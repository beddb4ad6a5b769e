//! Names of PLT entries (`strcmp@plt`), as objdump and perf give them.
//!
//! A call of a library function goes through the caller's PLT: a stub that
//! jumps through the function's GOT slot. The stubs have no symbols, so a
//! frame that starts at one would be named `module+0xoffset`. Each x86-64
//! stub's jump is `jmp *disp32(%rip)` (`ff 25`, after `endbr64` and a `bnd`
//! prefix in IBT-enabled PLTs); the slot it jumps through is the target of
//! a dynamic relocation (`JUMP_SLOT` in `.rela.plt`, `GLOB_DAT` for
//! `.plt.got`), whose symbol names the stub.

use object::elf::SHT_PROGBITS;
use object::read::elf::{ElfFile64, SectionHeader};
use object::{LittleEndian, Object, ObjectSection, ObjectSymbol, ObjectSymbolTable};
use object::{RelocationTarget, SymbolIndex};
use std::collections::HashMap;

/// The PLT sections whose entries are stubs that jump through a GOT slot:
/// `.plt` (without IBT; with it, its entries only push and jump to PLT0),
/// `.plt.sec` (IBT's stubs) and `.plt.got` (functions also called through
/// their address).
const PLT_SECTIONS: [&str; 3] = [".plt", ".plt.sec", ".plt.got"];

/// The stubs of the ELF file `data`, by their addresses in the file: the
/// name of the function each jumps to, with `@plt`. Empty for anything else
/// than a little-endian x86-64 ELF file.
///
/// ```
/// // a dynamically linked program calls its libraries through a PLT
/// let data = std::fs::read("/bin/sh").unwrap();
/// let names = tf_analyzer::plt::plt_names(&data);
/// assert!(!names.is_empty() && names.values().all(|n| n.ends_with("@plt")));
/// ```
pub fn plt_names(data: &[u8]) -> HashMap<u64, String> {
    let Ok(elf) = ElfFile64::<LittleEndian>::parse(data) else {
        return HashMap::new();
    };
    if elf.elf_header().e_machine.get(LittleEndian) != object::elf::EM_X86_64 {
        return HashMap::new();
    }
    let slots = got_slot_names(&elf);
    let mut names = HashMap::new();
    for section in elf.sections() {
        let header = section.elf_section_header();
        if !PLT_SECTIONS.contains(&section.name().unwrap_or_default())
            || header.sh_type(LittleEndian) != SHT_PROGBITS
        {
            continue;
        }
        let Ok(code) = section.data() else { continue };
        let size = match header.sh_entsize(LittleEndian) {
            8 | 16 => header.sh_entsize(LittleEndian) as usize,
            _ => 16,
        };
        for (k, entry) in code.chunks_exact(size).enumerate() {
            let at = section.address() + (k * size) as u64;
            if let Some(name) = jump_slot(entry, at).and_then(|slot| slots.get(&slot)) {
                names.insert(at, format!("{name}@plt"));
            }
        }
    }
    names
}

/// The GOT slot that the stub `entry` (at address `at`) jumps through: the
/// first `jmp *disp32(%rip)` in it.
fn jump_slot(entry: &[u8], at: u64) -> Option<u64> {
    let k = entry.windows(2).position(|w| w == [0xff, 0x25])?;
    let disp = i32::from_le_bytes(entry.get(k + 2..k + 6)?.try_into().ok()?);
    let next = at + k as u64 + 6;
    Some(next.wrapping_add_signed(i64::from(disp)))
}

/// The symbol each dynamically relocated slot is set to, by the slot's
/// address.
fn got_slot_names(elf: &ElfFile64<'_, LittleEndian>) -> HashMap<u64, String> {
    let Some(relocations) = elf.dynamic_relocations() else {
        return HashMap::new();
    };
    let symbols = elf.dynamic_symbol_table();
    let name = |index: SymbolIndex| {
        let symbol = symbols.as_ref()?.symbol_by_index(index).ok()?;
        let name = symbol.name().ok()?;
        (!name.is_empty()).then(|| crate::symbols::demangle(name))
    };
    relocations
        .filter_map(|(slot, r)| match r.target() {
            RelocationTarget::Symbol(index) => Some((slot, name(index)?)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::jump_slot;

    #[test]
    fn the_slot_is_where_the_stubs_jump_goes_through() {
        // objdump: 1040: ff 25 c2 2f 00 00  jmp *0x2fc2(%rip)  # 4008
        let plain = [
            0xff, 0x25, 0xc2, 0x2f, 0, 0, 0x68, 1, 0, 0, 0, 0xe9, 0xd0, 0xff, 0xff, 0xff,
        ];
        assert_eq!(jump_slot(&plain, 0x1040), Some(0x4008));
        // IBT: endbr64; bnd jmp *0x2f75(%rip); nopl
        let ibt = [
            0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0x75, 0x2f, 0, 0, 0x0f, 0x1f, 0x44, 0, 0,
        ];
        assert_eq!(jump_slot(&ibt, 0x1080), Some(0x1080 + 11 + 0x2f75));
        // IBT's .plt entry only pushes and jumps to PLT0: no slot
        let push = [
            0xf3, 0x0f, 0x1e, 0xfa, 0x68, 0, 0, 0, 0, 0xf2, 0xe9, 0xe1, 0xff, 0xff, 0xff, 0x90,
        ];
        assert_eq!(jump_slot(&push, 0x1030), None);
    }
}
