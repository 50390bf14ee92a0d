/* vitcp-conform: a thin main over the conformance library (conform/cli.h). */
#include <stdio.h>
#include "conform/cli.h"

int main(int argc, char **argv) { return cf_main(argc, argv, stdout, stderr); }
