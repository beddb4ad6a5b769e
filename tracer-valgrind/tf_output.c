/* Files of the trace directory (FORMAT.md section 2) and the manifest
 * (section 7). Files are opened for each chunk and closed right after: a
 * process may have hundreds of threads but Valgrind keeps only a dozen file
 * descriptors for itself, and a chunk is large enough (1 MiB) that the
 * open/close cost does not matter. */
#include "tf.h"
#include "config.h" /* VERSION */
#include "pub_tool_clientstate.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"

/* Core function: moves a file descriptor out of the client's range. */
extern Int VG_(safe_fd)(Int oldfd);

static volatile Bool write_failed;
static HChar failed_path[512];
static UInt start_time;

/* DIR/name into buf; both threads write files, so no allocation here. */
static const HChar *path_of(HChar *buf, SizeT cap, const HChar *name)
{
   SizeT d = VG_(strlen)(tf_out_dir), n = VG_(strlen)(name);
   if (d + 1 + n + 1 > cap)
      return NULL;
   VG_(memcpy)(buf, tf_out_dir, d);
   buf[d] = '/';
   VG_(memcpy)(buf + d + 1, name, n + 1);
   return buf;
}

static void report_failure(const HChar *path)
{
   if (!__sync_lock_test_and_set(&write_failed, True))
      VG_(strncpy)(failed_path, path ? path : tf_out_dir, sizeof failed_path - 1);
}

const HChar *tf_output_error(void)
{
   return write_failed ? failed_path : NULL;
}

static Bool write_all(Int fd, const UChar *data, SizeT len)
{
   while (len > 0) {
      Int n = VG_(write)(fd, data, len > (1u << 30) ? (1u << 30) : (Int)len);
      if (n <= 0)
         return False;
      data += n;
      len -= (SizeT)n;
   }
   return True;
}

/* Opens `name` for writing: truncated when `create`, else for appending. */
static Int open_file(const HChar *path, Bool create)
{
   SysRes r = VG_(open)(path, VKI_O_WRONLY | (create ? VKI_O_CREAT | VKI_O_TRUNC : VKI_O_APPEND), 0644);
   if (sr_isError(r))
      return -1;
   return VG_(safe_fd)((Int)sr_Res(r));
}

Bool tf_output_append(const HChar *name, Bool *created, const UChar *header,
                      const UChar *data, SizeT len)
{
   HChar buf[4096];
   const HChar *path = path_of(buf, sizeof buf, name);
   Int fd;
   Bool ok;
   if (tf_disabled)
      return True;
   fd = path ? open_file(path, !*created) : -1;
   if (fd < 0) {
      report_failure(path);
      return False;
   }
   ok = True;
   if (!*created && header)
      ok = write_all(fd, header, TF_FILE_HEADER_SIZE);
   ok = ok && write_all(fd, data, len);
   *created = True;
   VG_(close)(fd);
   if (!ok)
      report_failure(path);
   return ok;
}

Bool tf_output_init(void)
{
   struct vki_timeval tv;
   TfOutcome o = {False, False, 0, 0};
   VG_(gettimeofday)(&tv, NULL);
   start_time = (UInt)tv.tv_sec;
   tf_manifest_write(&o);
   return !write_failed;
}

static void mp_bytes(tf_mp *mp, const HChar *s)
{
   SizeT n = VG_(strlen)(s);
   if (tf_utf8_valid(s, n))
      tf_mp_str(mp, s, n);
   else
      tf_mp_bin(mp, s, n);
}

static void mp_strings(tf_mp *mp, XArray *xs)
{
   Word i, n = xs ? VG_(sizeXA)(xs) : 0;
   tf_mp_array(mp, (UInt)n);
   for (i = 0; i < n; i++)
      mp_bytes(mp, *(HChar **)VG_(indexXA)(xs, i));
}

static void build_manifest(tf_mp *mp, const TfOutcome *o)
{
   Word i, nargs = VG_(sizeXA)(VG_(args_for_client));
   ULong traced, skipped;
   tf_mp_map(mp, 19);
   tf_mp_cstr(mp, "format");
   tf_mp_cstr(mp, "tf-trace");
   tf_mp_cstr(mp, "version");
   tf_mp_uint(mp, TF_FORMAT_VERSION);
   tf_mp_cstr(mp, "tracer");
   tf_mp_cstr(mp, "tf-valgrind");
   tf_mp_cstr(mp, "tracer_version");
   tf_mp_cstr(mp, TF_TOOL_VERSION);
   tf_mp_cstr(mp, "backend");
   tf_mp_cstr(mp, "valgrind-" VERSION);
   tf_mp_cstr(mp, "command");
   tf_mp_array(mp, (UInt)nargs + 1);
   mp_bytes(mp, VG_(args_the_exename) ? VG_(args_the_exename) : "");
   for (i = 0; i < nargs; i++)
      mp_bytes(mp, *(HChar **)VG_(indexXA)(VG_(args_for_client), i));
   tf_mp_cstr(mp, "cwd");
   mp_bytes(mp, VG_(get_startup_wd)());
   tf_mp_cstr(mp, "pid");
   tf_mp_uint(mp, (ULong)VG_(getpid)());
   tf_mp_cstr(mp, "start_time");
   tf_mp_uint(mp, start_time);
   tf_mp_cstr(mp, "only");
   mp_strings(mp, tf_only);
   tf_mp_cstr(mp, "exclude");
   mp_strings(mp, tf_exclude);
   tf_mp_cstr(mp, "complete");
   tf_mp_bool(mp, o->complete && !write_failed);
   tf_mp_cstr(mp, "exit_code");
   if (o->have_exit_code)
      tf_mp_int(mp, o->exit_code);
   else
      tf_mp_nil(mp);
   tf_mp_cstr(mp, "exit_signal");
   if (o->exit_signal)
      tf_mp_int(mp, o->exit_signal);
   else
      tf_mp_nil(mp);
   tf_mp_cstr(mp, "threads");
   tf_threads_manifest(mp, &traced, &skipped);
   tf_mp_cstr(mp, "modules");
   tf_blocks_manifest_modules(mp);
   tf_mp_cstr(mp, "traced_instructions");
   tf_mp_uint(mp, traced);
   tf_mp_cstr(mp, "skipped_instructions");
   tf_mp_uint(mp, skipped);
   tf_mp_cstr(mp, "blocks");
   tf_mp_uint(mp, tf_blocks_count());
}

void tf_manifest_write(const TfOutcome *o)
{
   SizeT cap = 64 << 10;
   HChar tmpbuf[4096], pathbuf[4096];
   const HChar *tmp = path_of(tmpbuf, sizeof tmpbuf, "manifest.tmp");
   const HChar *path = path_of(pathbuf, sizeof pathbuf, "manifest");
   Int fd;
   Bool ok;
   if (tf_disabled)
      return;
   for (;;) {
      UChar *buf = VG_(malloc)("tf.manifest", cap);
      tf_mp mp;
      tf_mp_init(&mp, buf, cap);
      build_manifest(&mp, o);
      if (mp.overflow) {
         VG_(free)(buf);
         cap *= 4;
         continue;
      }
      fd = tmp && path ? open_file(tmp, True) : -1;
      ok = fd >= 0 && write_all(fd, buf, tf_mp_len(&mp));
      if (fd >= 0)
         VG_(close)(fd);
      if (!ok || VG_(rename)(tmp, path) != 0)
         report_failure(path);
      VG_(free)(buf);
      return;
   }
}
