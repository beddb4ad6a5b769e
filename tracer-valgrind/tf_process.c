/* The program's own processes, which its trace does not follow (FORMAT.md
 * section 7, `forked` and `exec`): the children it starts with fork or vfork
 * are counted (they run on under Valgrind with the tool disabled), and the
 * execve that replaces it is kept, its command read from the client's
 * memory before the system call, so that the manifest can say where the
 * trace ends and what ran next. A failed execve (a shell tries each
 * directory of PATH) is forgotten: the program goes on, traced.
 *
 * With --tf-follow-exec=yes (and Valgrind's --trace-children=yes), every
 * program that an execve of the run starts is traced too, each into a trace
 * of its own under DIR/execs (FORMAT.md section 2). */
#include "tf.h"
#include "tf_sys.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

Bool tf_follow_exec;

/* Creates `path` (mkdir is not among the tool's file functions: a system
 * call of the tool's own); whether it was created (False if it exists). */
static Bool make_dir(const HChar *path, Bool *exists)
{
   long r = sys(__NR_mkdir, (long)(Addr)path, 0755, 0, 0);
   *exists = r == -VKI_EEXIST;
   return r == 0;
}

const HChar *tf_process_trace_dir(const HChar *dir)
{
   struct vg_stat st;
   SizeT cap = VG_(strlen)(dir) + 64;
   HChar *execs = VG_(malloc)("tf.execs", cap), *own = VG_(malloc)("tf.execs", cap);
   Bool exists;
   Int n;
   VG_(sprintf)(execs, "%s/" TF_FILE_MANIFEST, dir);
   /* The run's first program writes its manifest before it runs. */
   if (!tf_follow_exec || sr_isError(VG_(stat)(execs, &st))) {
      VG_(free)(execs);
      VG_(free)(own);
      return dir;
   }
   VG_(sprintf)(execs, "%s/execs", dir);
   if (make_dir(execs, &exists) || exists) {
      /* A process may exec several times: DIR/execs/PID, then PID.2, ... */
      for (n = 1; n < 1000; n++) {
         if (n == 1)
            VG_(sprintf)(own, "%s/%d", execs, VG_(getpid)());
         else
            VG_(sprintf)(own, "%s/%d.%d", execs, VG_(getpid)(), n);
         if (make_dir(own, &exists))
            return own;
         if (!exists)
            break;
      }
   }
   tf_error("cannot make a directory for this program's trace in %s", execs);
   VG_(exit)(1);
}

/* Longest argument kept, and most arguments: the command is for a person
 * to read (and to trace directly). */
#define MAX_ARG 4096
#define MAX_ARGS 64

static ULong forks;
static HChar *exec_cmd[MAX_ARGS];
static SizeT n_exec;

void tf_process_forked(ThreadId tid)
{
   (void)tid;
   forks++;
}

ULong tf_process_forks(void)
{
   return forks;
}

/* The client's NUL-terminated string at `a`, cut at MAX_ARG bytes; NULL
 * where its first byte cannot be read. Checked byte by byte: execve is
 * rare, and its arguments are the program's, which may be bad pointers. */
static HChar *client_string(Addr a)
{
   SizeT n = 0;
   HChar *s;
   while (n < MAX_ARG && VG_(am_is_valid_for_client)(a + n, 1, VKI_PROT_READ) &&
          ((const HChar *)a)[n] != 0)
      n++;
   if (n == 0 && !VG_(am_is_valid_for_client)(a, 1, VKI_PROT_READ))
      return NULL;
   s = VG_(malloc)("tf.exec", n + 1);
   VG_(memcpy)(s, (const void *)a, n);
   s[n] = 0;
   return s;
}

static void forget_exec(void)
{
   SizeT i;
   for (i = 0; i < n_exec; i++)
      VG_(free)(exec_cmd[i]);
   n_exec = 0;
}

void tf_process_exec_failed(void)
{
   TfOutcome o = {False, False, 0, 0};
   forget_exec();
   tf_manifest_write(&o); /* the program goes on: not complete after all */
}

void tf_process_exec(Addr path, Addr argv)
{
   SizeT i;
   forget_exec();
   exec_cmd[n_exec] = client_string(path);
   if (exec_cmd[n_exec] == NULL)
      return;
   n_exec++;
   /* argv[0] is the name the program gives itself: the path stands for it */
   for (i = 1; argv != 0 && n_exec < MAX_ARGS; i++) {
      Addr at = argv + i * sizeof(Addr);
      HChar *arg;
      if (!VG_(am_is_valid_for_client)(at, sizeof(Addr), VKI_PROT_READ) || *(Addr *)at == 0)
         break;
      arg = client_string(*(Addr *)at);
      if (arg == NULL)
         break;
      exec_cmd[n_exec++] = arg;
   }
}

const HChar *const *tf_process_exec_command(SizeT *n)
{
   *n = n_exec;
   return (const HChar *const *)exec_cmd;
}
