/* The scenario and mutation lists, across protocols. */
#include <strings.h>

#include "internal.h"
#include "mutations.h"

#define MAX_ITEMS 256

static struct tg_scenario all_scenarios[MAX_ITEMS];
static struct tg_mutation all_mutations[MAX_ITEMS];
static size_t n_scenarios, n_mutations;

static void build(void)
{
    if (n_scenarios)
        return;
    const struct {
        const struct tg_scenario *v;
        size_t n;
    } sc[] = {{tg_vitcp_scenarios, tg_vitcp_scenario_count}, {tg_other_scenarios, tg_other_scenario_count}};
    for (size_t t = 0; t < sizeof sc / sizeof sc[0]; t++)
        for (size_t i = 0; i < sc[t].n && n_scenarios < MAX_ITEMS; i++)
            all_scenarios[n_scenarios++] = sc[t].v[i];
    const struct {
        const struct tg_mutation *v;
        size_t n;
    } mu[] = {{tg_vitcp_mutations, tg_vitcp_mutation_count}, {tg_other_mutations, tg_other_mutation_count}};
    for (size_t t = 0; t < sizeof mu / sizeof mu[0]; t++)
        for (size_t i = 0; i < mu[t].n && n_mutations < MAX_ITEMS; i++)
            all_mutations[n_mutations++] = mu[t].v[i];
}

const struct tg_scenario *tg_scenarios(size_t *count)
{
    build();
    *count = n_scenarios;
    return all_scenarios;
}

const struct tg_scenario *tg_find_scenario(const char *name)
{
    build();
    for (size_t i = 0; i < n_scenarios; i++)
        if (strcasecmp(all_scenarios[i].name, name) == 0)
            return &all_scenarios[i];
    return NULL;
}

const struct tg_mutation *tg_mutations(size_t *count)
{
    build();
    *count = n_mutations;
    return all_mutations;
}

const struct tg_mutation *tg_find_mutation(const char *id)
{
    build();
    for (size_t i = 0; i < n_mutations; i++)
        if (strcasecmp(vw_req_id(all_mutations[i].req), id) == 0)
            return &all_mutations[i];
    return NULL;
}

const char *tg_mutation_name(const struct tg_mutation *m) { return vw_req_id(m->req); }

const char *tg_proto_name(enum tg_proto p)
{
    switch (p) {
    case TG_VITCP:
        return "VI/TCP";
    case TG_IFT:
        return "IFT";
    case TG_EEP:
        return "PacketWay EEP";
    case TG_WARP:
        return "WARP";
    }
    return "?";
}
