/* vitcp-trafgen: see trafgen/include/vitcp/trafgen.h and docs/trafgen.md. */
#include "vitcp/trafgen.h"

int main(int argc, char **argv) { return tg_main(argc, argv); }
