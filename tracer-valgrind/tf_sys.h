/* System calls the tool makes itself, from the encoder threads too (plain
 * OS threads that run none of Valgrind's machinery): a raw syscall, and
 * waiting on and waking a futex word. */
#ifndef TF_SYS_H
#define TF_SYS_H

#include "pub_tool_basics.h"
#include "pub_tool_vkiscnums.h"

static inline long sys(long n, long a, long b, long c, long d)
{
   long r;
   register long r10 __asm__("r10") = d;
   __asm__ volatile("syscall"
                    : "=a"(r)
                    : "0"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                    : "rcx", "r11", "memory");
   return r;
}

#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129

/* Sleeps while *w holds val. */
static inline void futex_wait(volatile UInt *w, UInt val)
{
   sys(__NR_futex, (long)(Addr)w, FUTEX_WAIT_PRIVATE, val, 0);
}

static inline void futex_wake(volatile UInt *w)
{
   sys(__NR_futex, (long)(Addr)w, FUTEX_WAKE_PRIVATE, 0x7fffffff, 0);
}

#endif
