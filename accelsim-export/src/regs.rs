//! The fixed register file x86 registers map to.
//!
//! Accel-Sim tracks dependencies only through the `R<n>` registers an
//! instruction line lists, so every x86 register a program uses gets a fixed
//! `R` number:
//!
//! | x86 | R |
//! |---|---|
//! | `rax rcx rdx rbx rsp rbp rsi rdi r8`–`r15` (any width) | `R0`–`R15` |
//! | `rflags` (read by branches, `cmov`, `setcc`, `adc`) | `R16` |
//! | two temporaries (a loaded value before its operation) | `R17`, `R18` |
//! | `xmm`/`ymm`/`zmm` 0–31 | `R19`–`R50` |
//! | `st0`–`st7` / `mm0`–`mm7` | `R51`–`R58` |
//!
//! A kernel's `-nregs` is one more than the highest number its lines use,
//! as a SASS register count is.

use iced_x86::Register;

/// The flags register.
pub const FLAGS: u8 = 16;
/// The first temporary (a loaded value on its way to an operation or store).
pub const TEMP: u8 = 17;
/// The first vector register.
const VECTOR: u8 = 19;
/// The first x87/MMX register.
const X87: u8 = 51;

/// The `R` number of an x86 register, `None` for those that carry no data
/// dependency here (`rip`, segment, control and mask registers).
///
/// ```
/// use iced_x86::Register;
/// use tf_accelsim::regs::r_of;
/// assert_eq!(r_of(Register::EAX), Some(0));
/// assert_eq!(r_of(Register::R15W), Some(15));
/// assert_eq!(r_of(Register::YMM2), Some(21));
/// assert_eq!(r_of(Register::RIP), None);
/// ```
pub fn r_of(reg: Register) -> Option<u8> {
    if reg == Register::None {
        return None;
    }
    let full = reg.full_register();
    if full.is_gpr64() {
        Some(full.number() as u8)
    } else if full.is_zmm() {
        Some(VECTOR + full.number() as u8)
    } else if reg.is_st() || reg.is_mm() {
        Some(X87 + reg.number() as u8)
    } else {
        None
    }
}

/// The stack pointer's `R` number.
pub const RSP: u8 = 4;
