/* Where vitcp-conform finds its cases when --cases is not given. */
#ifndef CONFORM_CASES_DIR_H
#define CONFORM_CASES_DIR_H

/* The installed cases (share/vitcp/cases beside the program's own prefix,
 * so an installed or relocated vitcp-conform finds its own), else the
 * source tree's cases folder this build was configured from. Either holds
 * the default protocol's cases and one subfolder per other protocol (NAME/), installed
 * as a tree; cf_case_set_load_dir reads both. --cases may also name a
 * protocol's subfolder alone. */
const char *cf_default_cases_dir(void);

#endif
