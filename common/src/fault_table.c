/* The fault tables' shared lookups and printer (vitcp/fault_table.h). */
#include <string.h>
#include "vitcp/fault_table.h"

unsigned fault_table_find(const struct fault_row *rows, unsigned n, const char *name)
{
    for (unsigned f = 1; name && f < n; f++)
        if (strcmp(name, rows[f].name) == 0 || strcmp(name, rows[f].id) == 0)
            return f;
    return 0;
}

const struct fault_row *fault_table_row(const struct fault_row *rows, unsigned n, unsigned f)
{
    return &rows[f < n ? f : 0];
}

int fault_table_print(const struct fault_row *rows, unsigned n, FILE *out)
{
    for (unsigned f = 1; f < n; f++)
        if (fprintf(out, "%s %s\n", rows[f].name, rows[f].id) < 0)
            return -1;
    return 0;
}
