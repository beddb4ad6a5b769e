/* The manifest (FORMAT.md section 7): written at start (complete: false)
 * and at the end, from what the threads and the block table know; the keys
 * every tracer writes alike come from tf_tracer.h. */
#include "tf.h"
#include "config.h" /* VERSION */
#include "pub_tool_clientstate.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"

static UInt start_time;

Bool tf_manifest_init(void)
{
   struct vki_timeval tv;
   TfOutcome o = {False, False, 0, 0};
   VG_(gettimeofday)(&tv, NULL);
   start_time = (UInt)tv.tv_sec;
   tf_manifest_write(&o);
   return tf_output_error() == NULL;
}

/* The strings of an XArray of HChar* (its storage is contiguous). */
static const char *const *strings(XArray *xs, size_t *n)
{
   *n = xs ? (size_t)VG_(sizeXA)(xs) : 0;
   return *n ? (const char *const *)VG_(indexXA)(xs, 0) : NULL;
}

/* The keys every tracer writes alike come from tf_tracer.h. */
static void build_manifest(tf_mp *mp, const TfOutcome *o)
{
   Word i, nargs = VG_(sizeXA)(VG_(args_for_client));
   const HChar **cmd = VG_(malloc)("tf.manifest.cmd", (nargs + 1) * sizeof *cmd);
   ULong traced, skipped;
   tf_manifest_run run;
   cmd[0] = VG_(args_the_exename) ? VG_(args_the_exename) : "";
   for (i = 0; i < nargs; i++)
      cmd[i + 1] = *(HChar **)VG_(indexXA)(VG_(args_for_client), i);
   run.tracer = "tf-valgrind";
   run.tracer_version = TF_TOOL_VERSION;
   run.backend = "valgrind-" VERSION;
   run.command = cmd;
   run.n_command = (size_t)nargs + 1;
   run.cwd = VG_(get_startup_wd)();
   run.pid = (ULong)VG_(getpid)();
   run.start_time = start_time;
   run.only = strings(tf_only, &run.n_only);
   run.exclude = strings(tf_exclude, &run.n_exclude);
   run.exec = tf_process_exec_command(&run.n_exec);
   /* Before an execve, everything the program did is written: the trace
    * ends there, complete. */
   run.complete = (o->complete || run.n_exec > 0) && tf_output_error() == NULL;
   run.have_exit_code = o->have_exit_code;
   run.exit_code = o->exit_code;
   run.exit_signal = o->exit_signal;
   run.worksharing = tf_worksharing; /* tf_omp.c, from the preload library's wrappers */
   run.forked = tf_process_forks();
   tf_manifest_common(mp, &run);
   tf_mp_cstr(mp, "threads");
   tf_threads_manifest(mp, &traced, &skipped);
   tf_mp_cstr(mp, "modules");
   tf_modules_manifest(mp);
   tf_manifest_totals(mp, traced, skipped, tf_blocks_count());
   VG_(free)(cmd);
}

void tf_manifest_write(const TfOutcome *o)
{
   SizeT cap = 64 << 10;
   if (tf_disabled)
      return;
   for (;;) {
      UChar *buf = VG_(malloc)("tf.manifest", cap);
      tf_mp mp;
      tf_mp_init(&mp, buf, cap);
      build_manifest(&mp, o);
      if (!mp.overflow)
         tf_output_replace(TF_FILE_MANIFEST, buf, tf_mp_len(&mp));
      VG_(free)(buf);
      if (!mp.overflow)
         return;
      cap *= 4;
   }
}
