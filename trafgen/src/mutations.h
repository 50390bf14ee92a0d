/* Internal: the per-protocol mutation tables. */
#ifndef VITCP_TRAFGEN_MUTATIONS_H
#define VITCP_TRAFGEN_MUTATIONS_H
#include "vitcp/trafgen.h"
extern const struct tg_mutation tg_vitcp_mutations[];
extern const size_t tg_vitcp_mutation_count;
extern const struct tg_mutation tg_other_mutations[];
extern const size_t tg_other_mutation_count;
#endif
