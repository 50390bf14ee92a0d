/* Internal: a parsed VI/TCP scenario file (see docs/trafgen.md). */
#ifndef VITCP_TRAFGEN_SCRIPT_H
#define VITCP_TRAFGEN_SCRIPT_H

#include <stddef.h>
#include <stdint.h>
#include "vitcp/trafgen.h"

enum tg_step_kind { TG_STEP_CONNECT, TG_STEP_SEND, TG_STEP_WRITE, TG_STEP_READ, TG_STEP_NOP, TG_STEP_CLOSE };

struct tg_step {
    enum tg_step_kind kind;
    int dir;          /* 0 client, 1 server */
    uint32_t bytes;
    bool imm;
    uint16_t attrs;   /* CONNECT: extra Calling Attributes */
    bool crc;         /* CONNECT */
};

struct tg_script {
    size_t n;
    struct tg_step step[];
};

#endif
