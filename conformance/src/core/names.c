/* Lookups in a module's vocabulary tables (conform/protocol.h). */
#include <string.h>
#include "conform/protocol.h"

int cf_name_index(const char *const *names, unsigned count, const char *name)
{
    for (unsigned i = 0; i < count; i++)
        if (names[i] && strcmp(names[i], name) == 0)
            return (int)i;
    return -1;
}

const char *cf_name_at(const char *const *names, unsigned count, unsigned i)
{
    return i < count && names[i] ? names[i] : "?";
}

int cf_proto_type_by_name(const struct conform_protocol *p, const char *name)
{
    return p->type_by_name ? p->type_by_name(name) : cf_name_index(p->type_names, p->type_count, name);
}

const char *cf_proto_type_name(const struct conform_protocol *p, unsigned type)
{
    return p->type_name ? p->type_name(type) : cf_name_at(p->type_names, p->type_count, type);
}

int cf_proto_field_by_name(const struct conform_protocol *p, const char *name)
{
    return cf_name_index(p->field_names, p->field_count, name);
}

const char *cf_proto_field_name(const struct conform_protocol *p, unsigned field)
{
    return cf_name_at(p->field_names, p->field_count, field);
}
