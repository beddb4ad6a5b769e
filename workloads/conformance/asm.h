/* Conformance programs: functions written in assembly, so that their
 * instructions, offsets and memory operands are fixed whatever the compiler.
 * FUNC(name) opens a global function, END(name) closes it (symbol size set,
 * so that a tracer and the checks agree on where it ends). */
#define FUNC(name) ".text\n.globl " #name "\n.type " #name ",@function\n" #name ":\n"
#define END(name) ".size " #name ", .-" #name "\n"
