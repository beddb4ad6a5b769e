/* The tf tool: registration, options (their values and checks; reading them
 * is tf_options.c), and the core's callbacks (threads, system calls,
 * signals, fork, exec, the end of the process). */
#include "tf.h"
#include "tf_options.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

/* Core option, not in the tool headers: names must be the raw symbols. */
extern Bool VG_(clo_demangle);

const HChar *tf_out_dir;
XArray *tf_only;
XArray *tf_exclude;
Bool tf_disabled;
Bool tf_verbose;
Int tf_bench;
Int tf_hold_files;
Int tf_encoders;
Bool tf_worksharing = True;

IRSB *tf_instrument(VgCallbackClosure *closure, IRSB *sbIn, const VexGuestLayout *layout,
                    const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
                    IRType gWordTy, IRType hWordTy);

/* How the process ends. */
static Bool exit_group_seen;
static Long exit_group_code;
static ThreadId exit_vgtid; /* the last thread that made the exit syscall */
static Long exit_code;
static Int self_signal;     /* last signal the process sent itself, not yet handled */
static ThreadId running;    /* the thread running client code */
static Thread **by_vgtid;   /* live threads by Valgrind thread id */

/* ---- options ---- */

static void fatal(const HChar *msg, const HChar *arg)
{
   tf_error(msg, arg);
   VG_(exit)(1);
}

static void post_clo_init(void)
{
   struct vg_stat st;
   if (tf_out_dir == NULL || tf_out_dir[0] == 0)
      fatal("--tf-out=DIR is required%s", "");
   if (tf_out_dir[0] != '/') {
      const HChar *wd = VG_(get_startup_wd)();
      HChar *abs = VG_(malloc)("tf.out", VG_(strlen)(wd) + VG_(strlen)(tf_out_dir) + 2);
      VG_(sprintf)(abs, "%s/%s", wd, tf_out_dir);
      tf_out_dir = abs;
   }
   if (sr_isError(VG_(stat)(tf_out_dir, &st)) || !VKI_S_ISDIR(st.mode))
      fatal("the trace directory %s does not exist", tf_out_dir);
   tf_out_dir = tf_process_trace_dir(tf_out_dir);

   /* Blocks must end at the first control transfer and hold each
    * instruction once, whatever the command line said; the guest IP must be exact at every memory access, so that
    * a fault can be placed at its instruction. */
   VG_(clo_vex_control).guest_chase = False;
   VG_(clo_vex_control).iropt_unroll_thresh = 0; /* no copies of a loop body */
   if (VG_(clo_vex_control).iropt_register_updates_default < VexRegUpdUnwindregsAtMemAccess)
      VG_(clo_vex_control).iropt_register_updates_default = VexRegUpdUnwindregsAtMemAccess;
   if (VG_(clo_px_file_backed) != VexRegUpd_INVALID &&
       VG_(clo_px_file_backed) < VexRegUpdUnwindregsAtMemAccess)
      VG_(clo_px_file_backed) = VexRegUpdUnwindregsAtMemAccess;
   /* Function names as the symbol tables have them. */
   VG_(clo_demangle) = False;
   VG_(clo_show_below_main) = True;

   by_vgtid = VG_(calloc)("tf.threads", VG_N_THREADS + 1, sizeof(Thread *));
   tf_blocks_init();
   if (!tf_manifest_init())
      fatal("cannot write the manifest in %s", tf_out_dir);
}

/* ---- threads ---- */


static Thread *thread_of(ThreadId tid)
{
   if (tid == 0 || tid > VG_N_THREADS)
      return NULL;
   if (by_vgtid[tid] == NULL) /* the main thread: nobody created it */
      by_vgtid[tid] = tf_thread_new(tid, NULL);
   return by_vgtid[tid];
}

static Thread *thread_if_any(ThreadId tid)
{
   return by_vgtid && tid > 0 && tid <= VG_N_THREADS ? by_vgtid[tid] : NULL;
}

/* Appends a marker of kind `kind` with `extra` words after it. */
static void put_marker(Thread *t, UInt kind, ULong payload, UInt extra, ULong x)
{
   ULong *m = tf_raw_marker_room(t, 1 + extra);
   m[0] = tf_raw_marker(kind, payload);
   if (extra)
      m[1] = x;
   tf_raw_wrote(t, m + 1 + extra);
}

static Thread *current; /* the thread running client code */

void tf_note_create(ULong start_routine)
{
   /* a forked child runs its parent's instrumented code, untraced */
   if (tf_disabled)
      return;
   if (current)
      current->created_routine = (Addr)start_routine;
   if (start_routine)
      tf_function_note((Addr)start_routine);
}

static void on_start_client_code(ThreadId tid, ULong blocks_dispatched)
{
   Thread *t;
   if (tf_disabled && thread_if_any(tid) == NULL)
      return;
   t = thread_of(tid);
   if (t == NULL)
      return;
   running = tid;
   current = t;
   if (!t->started) {
      t->started = True;
      tf_thread_started(t);
   }
   tf_raw_start(t);
}

static void on_stop_client_code(ThreadId tid, ULong blocks_dispatched)
{
   Thread *t = thread_if_any(tid);
   current = NULL;
   if (t)
      tf_raw_stop(t);
}

static void on_thread_create(ThreadId parent, ThreadId child)
{
   Thread *p, *c;
   if (tf_disabled || by_vgtid == NULL || child == 0 || child > VG_N_THREADS)
      return;
   p = thread_if_any(parent);
   c = tf_thread_new(child, p);
   by_vgtid[child] = c;
   tf_threads_free_ended();
}

static Bool faulted; /* a fault inside a block killed the process */

static void end_thread(Thread *t, UInt how)
{
   /* A thread ends in the middle of a block only when a fault inside the
    * block kills the process: the instructions before it ran. */
   if (tf_raw_in_progress(t)) {
      tf_raw_fault(t, VG_(get_IP)(t->vgtid));
      faulted = True;
   }
   put_marker(t, MK_EXIT, t->exit_syscall ? TF_EXIT_ENDED : how, 0, 0);
   tf_raw_handoff(t, False);
   t->ended_vg = True;
   by_vgtid[t->vgtid] = NULL;
}

static void on_thread_exit(ThreadId tid)
{
   Thread *t = thread_if_any(tid);
   if (tf_disabled || t == NULL)
      return;
   end_thread(t, TF_EXIT_PROCESS);
}

static void on_fork_child(ThreadId tid)
{
   /* The child must not write into the parent's trace: it stops tracing. */
   tf_disabled = True;
   tf_raw_forget();
}

/* ---- system calls ---- */

/* Writes everything recorded so far, e.g. before the process image is
 * replaced. */
static void flush_all(void)
{
   TfOutcome o = {False, False, 0, 0};
   tf_raw_drain(True);
   tf_blocks_flush();
   tf_manifest_write(&o);
}

/* Requests of tf's preload library (tf_requests.h). */
static Bool client_request(ThreadId tid, UWord *args, UWord *ret)
{
   Thread *t = thread_if_any(tid);
   if (!VG_IS_TOOL_USERREQ('T', 'F', args[0]))
      return False;
   *ret = 0;
   if (tf_disabled || t == NULL || t->discard)
      return True;
   return tf_omp_request(t, args);
}

static ULong now_nanos(void)
{
   struct vki_timespec ts;
   VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
   return (ULong)ts.tv_sec * 1000000000ull + (ULong)ts.tv_nsec;
}

static void pre_syscall(ThreadId tid, UInt no, UWord *args, UInt nargs)
{
   Thread *t = thread_if_any(tid);
   if (tf_disabled)
      return;
   switch (no) {
   case __NR_exit_group:
      exit_group_seen = True;
      exit_group_code = (Int)args[0];
      break;
   case __NR_exit:
      exit_vgtid = tid;
      exit_code = (Int)args[0];
      if (t)
         t->exit_syscall = True;
      break;
   case __NR_execve:
   case __NR_execveat:
      /* The trace ends here unless the call fails (post_syscall). */
      tf_process_exec(args[no == __NR_execveat], args[1 + (no == __NR_execveat)]);
      flush_all();
      break;
   case __NR_kill:
      if ((Int)args[0] == VG_(getpid)())
         self_signal = (Int)args[1];
      break;
   case __NR_tgkill:
      if ((Int)args[0] == VG_(getpid)())
         self_signal = (Int)args[2];
      break;
   case __NR_tkill:
      self_signal = (Int)args[1];
      break;
   default:
      break;
   }
   if (t)
      t->syscall_start = now_nanos();
}

static void post_syscall(ThreadId tid, UInt no, UWord *args, UInt nargs, SysRes res)
{
   Thread *t = thread_if_any(tid);
   if (tf_disabled || t == NULL || no == __NR_rt_sigreturn) /* that is signal_return */
      return;
   if (no == __NR_execve || no == __NR_execveat)
      tf_process_exec_failed(); /* or it would not have returned */
   /* after the block that ends in the syscall instruction */
   put_marker(t, MK_SYSCALL, no, 1, t->syscall_start ? now_nanos() - t->syscall_start : 0);
}

/* ---- signals ---- */

static void pre_deliver_signal(ThreadId tid, Int signo, Bool alt_stack)
{
   Thread *t;
   if (tf_disabled || (t = thread_of(tid)) == NULL)
      return;
   if (tf_raw_in_progress(t)) /* a synchronous fault inside a block */
      tf_raw_fault(t, VG_(get_IP)(tid));
   if (signo == self_signal)
      self_signal = 0; /* it was handled, so it did not kill the process */
   put_marker(t, MK_SIGNAL, (ULong)signo, 0, 0);
}

static void post_deliver_signal(ThreadId tid, Int signo)
{
   Thread *t = thread_if_any(tid);
   if (tf_disabled || t == NULL)
      return;
   put_marker(t, MK_SIGRET, (ULong)signo, 0, 0);
}

/* Something the trace cannot record: says what, writes what was recorded
 * (the manifest then says the trace is incomplete) and ends the process. */
void tf_fatal(const HChar *fmt, ...)
{
   va_list vargs;
   VG_(printf)("tf: ");
   va_start(vargs, fmt);
   VG_(vprintf)(fmt, vargs);
   va_end(vargs);
   VG_(printf)("; the trace ends here\n");
   if (!tf_disabled)
      flush_all();
   VG_(exit)(1);
}

/* ---- the end ---- */

static void fini(Int exitcode_unused)
{
   TfOutcome o = {True, False, 0, 0};
   UInt i;
   if (tf_disabled)
      return;
   for (i = 1; by_vgtid && i <= VG_N_THREADS; i++)
      if (by_vgtid[i])
         end_thread(by_vgtid[i], TF_EXIT_PROCESS);
   tf_raw_drain(True);
   tf_blocks_flush();
   if (exit_group_seen) {
      o.have_exit_code = True;
      o.exit_code = exit_group_code;
   } else if (exit_vgtid != 0 && exit_vgtid == running && !faulted) {
      o.have_exit_code = True; /* the last thread ended with exit */
      o.exit_code = exit_code;
   } else {
      /* A fatal signal: the core does not tell tools which one. A fault
       * inside a block is a SIGSEGV; otherwise it is the last signal the
       * process sent itself (abort, raise), if any. */
      o.exit_signal = faulted ? VKI_SIGSEGV : self_signal;
   }
   tf_manifest_write(&o);
   if (tf_omp_lost_chunks() > 0)
      tf_error(TF_WS_LOST_MESSAGE, tf_omp_lost_chunks());
   if (tf_output_error())
      tf_error("cannot write %s; the trace is incomplete", tf_output_error());
}

static void pre_clo_init(void)
{
   VG_(details_name)("tf");
   VG_(details_version)(TF_TOOL_VERSION);
   VG_(details_description)("records what every thread executes, for SIMT analysis");
   VG_(details_copyright_author)("Copyright (C) the tf authors.");
   VG_(details_bug_reports_to)("https://github.com/tf-simt/tf/issues");
   VG_(details_avg_translation_sizeB)(400);

   VG_(basic_tool_funcs)(post_clo_init, tf_instrument, fini);
   VG_(needs_command_line_options)(tf_process_option, tf_print_usage, tf_print_debug_usage);
   VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
   VG_(needs_client_requests)(client_request);

   VG_(track_start_client_code)(on_start_client_code);
   VG_(track_pre_thread_ll_create)(on_thread_create);
   VG_(track_stop_client_code)(on_stop_client_code);
   VG_(track_pre_thread_ll_exit)(on_thread_exit);
   VG_(track_pre_deliver_signal)(pre_deliver_signal);
   VG_(track_post_deliver_signal)(post_deliver_signal);
   VG_(atfork)(NULL, tf_process_forked, on_fork_child);

   tf_only = VG_(newXA)(VG_(malloc), "tf.only", VG_(free), sizeof(HChar *));
   tf_exclude = VG_(newXA)(VG_(malloc), "tf.exclude", VG_(free), sizeof(HChar *));
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)
