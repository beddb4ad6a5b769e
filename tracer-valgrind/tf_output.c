/* Files of the trace directory (FORMAT.md section 2), and the tool's error
 * messages: the leaf every other file may call. Files are opened for each
 * chunk and closed right after: a process may have hundreds of threads but
 * Valgrind keeps only about ten file descriptors for itself and its tool,
 * and a chunk is large enough (1 MiB) that the open/close cost does not
 * matter. Up to eight encoder threads write chunks at once, so at most
 * MAX_OPEN_FILES trace files are open at a time: with one more descriptor
 * wanted than Valgrind has left, VG_(safe_fd) fails an assertion and the
 * run dies. */
#include "tf.h"
#include "tf_sys.h"
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

#define MAX_OPEN_FILES 3

/* Trace files open now (at most MAX_OPEN_FILES); a futex word. */
static volatile UInt open_files;

/* Waits until fewer than MAX_OPEN_FILES trace files are open, and counts
 * one more. */
static void take_file_slot(void)
{
   for (;;) {
      UInt n = open_files;
      if (n < MAX_OPEN_FILES) {
         if (__sync_bool_compare_and_swap(&open_files, n, n + 1))
            return;
      } else {
         futex_wait(&open_files, n);
      }
   }
}

static void give_file_slot(void)
{
   __sync_fetch_and_sub(&open_files, 1);
   futex_wake(&open_files);
}

/* Opens `name` for writing: truncated when `create`, else for appending;
 * holds a file slot while it is open (close it with close_file). */
static Int open_file(const HChar *path, Bool create)
{
   SysRes r;
   take_file_slot();
   r = VG_(open)(path, VKI_O_WRONLY | (create ? VKI_O_CREAT | VKI_O_TRUNC : VKI_O_APPEND), 0644);
   if (sr_isError(r)) {
      give_file_slot();
      return -1;
   }
   return VG_(safe_fd)((Int)sr_Res(r));
}

static void close_file(Int fd)
{
   if (tf_hold_files > 0) {
      struct vki_timespec ts = {tf_hold_files / 1000, (tf_hold_files % 1000) * 1000000L};
      sys(__NR_nanosleep, (long)(Addr)&ts, 0, 0, 0);
   }
   VG_(close)(fd);
   give_file_slot();
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
   close_file(fd);
   if (!ok)
      report_failure(path);
   return ok;
}

/* Replaces file `name` atomically: written to TF_FILE_MANIFEST_TMP, then
 * renamed (only the manifest is rewritten). */
Bool tf_output_replace(const HChar *name, const UChar *data, SizeT len)
{
   HChar tmpbuf[4096], pathbuf[4096];
   const HChar *tmp = path_of(tmpbuf, sizeof tmpbuf, TF_FILE_MANIFEST_TMP);
   const HChar *path = path_of(pathbuf, sizeof pathbuf, name);
   Int fd;
   Bool ok;
   if (tf_disabled)
      return True;
   fd = tmp && path ? open_file(tmp, True) : -1;
   ok = fd >= 0 && write_all(fd, data, len);
   if (fd >= 0)
      close_file(fd);
   if (!ok || VG_(rename)(tmp, path) != 0) {
      report_failure(path);
      return False;
   }
   return True;
}

void tf_error(const HChar *fmt, ...)
{
   va_list vargs;
   VG_(printf)("tf: ");
   va_start(vargs, fmt);
   VG_(vprintf)(fmt, vargs);
   va_end(vargs);
   VG_(printf)("\n");
}
