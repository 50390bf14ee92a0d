/* IFT, PacketWay EEP and WARP scenarios and mutations. */
#include <string.h>

#include "internal.h"
#include "mutations.h"

const struct tg_scenario tg_other_scenarios[] = {{NULL, TG_IFT, NULL, NULL}};
const size_t tg_other_scenario_count = 0;
const struct tg_mutation tg_other_mutations[] = {{VW_REQ_NONE, TG_IFT, NULL, NULL, NULL}};
const size_t tg_other_mutation_count = 0;
