/* The tool's command line: the --tf-* options, read into the option
 * variables (defined in tf_main.c, declared in tf.h), and their usage text
 * for --help and --help-debug. */
#include "tf_options.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_options.h"

Bool tf_process_option(const HChar *arg)
{
   const HChar *v;
   if VG_STR_CLO (arg, "--tf-out", v) {
      tf_out_dir = v;
   } else if VG_STR_CLO (arg, "--tf-only", v) {
      VG_(addToXA)(tf_only, &v);
   } else if VG_STR_CLO (arg, "--tf-exclude", v) {
      VG_(addToXA)(tf_exclude, &v);
   } else if VG_BOOL_CLO (arg, "--tf-verbose", tf_verbose) {
   } else if VG_INT_CLO (arg, "--tf-bench", tf_bench) {
   } else if VG_BINT_CLO (arg, "--tf-hold-files", tf_hold_files, 0, 10000) {
   } else if VG_BINT_CLO (arg, "--tf-encoders", tf_encoders, 0, 8) {
   } else if VG_BOOL_CLO (arg, "--tf-worksharing", tf_worksharing) {
   } else if VG_BOOL_CLO (arg, "--tf-follow-exec", tf_follow_exec) {
   } else {
      return False;
   }
   return True;
}

void tf_print_usage(void)
{
   VG_(printf)("    --tf-out=DIR          write the trace into DIR, which must exist [required]\n"
               "    --tf-only=FN          trace only while FN is on the call stack (repeatable)\n"
               "    --tf-exclude=FN       skip FN and its callees (repeatable)\n"
               "                          (FN: a symbol, or FILE+0xOFFSET for code without one)\n"
               "    --tf-verbose=no|yes   describe the runtime functions found [no]\n"
               "    --tf-encoders=N       encoder threads, 1..8; 0: 8 [0]\n"
               "    --tf-follow-exec=no|yes  trace each program an execve starts into\n"
               "                          DIR/execs/PID (with --trace-children=yes) [no]\n");
}

void tf_print_debug_usage(void)
{
   VG_(printf)("    --tf-bench=0|1|2|3    measure where time goes: 1 drops the raw records,\n"
               "                          2 runs the state machine but not the encoder,\n"
               "                          3 encodes but writes no thread file [0]\n"
               "    --tf-hold-files=MS    keep each trace file open MS ms longer after a\n"
               "                          write, as a slow disk would (checks that the\n"
               "                          tool stays within Valgrind's descriptors) [0]\n"
               "    --tf-worksharing=no   record no loop_chunk or static_loop events, as the Pin\n"
               "                          tool (manifest key worksharing false) [yes]\n");
}
