//! Signals sent to `tf trace` go to the traced program.
//!
//! `tf trace` must outlive the program to finish the trace and print its
//! summary, as a shell outlives its foreground job. A signal that the
//! terminal sends (Ctrl-C, Ctrl-\) reaches the whole foreground process
//! group, the program included, so tf only lives on. A signal that a process
//! sends to tf alone (`kill -TERM`, a job scheduler, `timeout`) is passed on
//! to the program; tf then waits for it, and exits as it did (128+N when the
//! signal killed it).

use std::io;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};

/// The signals that tf passes on.
const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGQUIT, libc::SIGHUP];

/// The program's process id, for the handler (0 before it runs).
static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(signo: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let pid = CHILD.load(Ordering::Relaxed);
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    // si_code ≤ 0: sent by a process (kill, sigqueue, tkill); the terminal's
    // signals (SI_KERNEL) already reached the program.
    if pid > 0 && code <= 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe {
            libc::kill(pid, signo);
        }
    }
}

/// A signal set of [`FORWARDED`].
fn forwarded_set() -> libc::sigset_t {
    // SAFETY: sigemptyset initializes the set; sigaddset takes valid signals.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in FORWARDED {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Starts `cmd` and from then on passes the signals of [`FORWARDED`] sent
/// to tf on to it. They are blocked while it starts, so that none is lost
/// or kills tf in between; the program starts with tf's mask from before.
pub fn spawn(cmd: &mut Command) -> io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let set = forwarded_set();
    // SAFETY: a zeroed sigset_t is a valid value to be overwritten.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid sets; only this thread's mask changes.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
    }
    let child_mask = old;
    // SAFETY: between fork and exec the closure only calls sigprocmask,
    // which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            libc::sigprocmask(libc::SIG_SETMASK, &child_mask, std::ptr::null_mut());
            Ok(())
        });
    }
    let child = cmd.spawn();
    if let Ok(c) = &child {
        CHILD.store(c.id() as i32, Ordering::Relaxed);
        for s in FORWARDED {
            // SAFETY: a handler that only calls kill; SA_RESTART keeps
            // tf's own wait going.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = forward as *const () as usize;
                sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(s, &sa, std::ptr::null_mut());
            }
        }
    }
    // SAFETY: restores the mask saved above.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
    child
}
