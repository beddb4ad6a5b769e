/* The tool's command line (tf_options.c): the --tf-* options, read into the
 * option variables that tf.h declares, and their usage text. tf_main.c
 * hands these to the core (needs_command_line_options). */
#ifndef TF_OPTIONS_H
#define TF_OPTIONS_H
#include "tf.h"

/* Reads one command-line argument; False if it is not a tf option. */
Bool tf_process_option(const HChar *arg);
/* Prints the options for --help. */
void tf_print_usage(void);
/* Prints the debugging options for --help-debug. */
void tf_print_debug_usage(void);

#endif
