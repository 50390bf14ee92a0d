/* The vitcp-conform command line, callable from tests. */
#ifndef CONFORM_CLI_H
#define CONFORM_CLI_H

#include <stdio.h>

#define CF_EXIT_OK 0      /* every MUST passed / lint found no error */
#define CF_EXIT_FAIL 1    /* a MUST failed or timed out / lint found errors */
#define CF_EXIT_USAGE 2   /* bad command line, unreadable input, unreachable target */

/* Run `vitcp-conform argv[1..]`; normal output to out, messages to err. */
int cf_main(int argc, char **argv, FILE *out, FILE *err);

#endif
