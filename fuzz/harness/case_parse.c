/* conformance: a case file's text through cf_case_parse. It returns 0 with
 * a case, or -1 with "FILE:LINE: reason" in the error buffer (never
 * overrun, even when small). */
#include <string.h>

#include "fuzz.h"
#include "conform/case.h"

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    char *text = malloc(len + 1);
    if (text == NULL)
        abort();
    memcpy(text, buf, len);
    text[len] = '\0';
    static const size_t errlens[] = {256, 7};
    for (unsigned i = 0; i < 2; i++) {
        char *err = malloc(errlens[i]); /* exact size: ASan sees an overrun */
        static struct cf_case c; /* large: not on the stack */
        memset(err, 'X', errlens[i]);
        int rc = cf_case_parse(text, "fuzz.case", &c, err, errlens[i]);
        fuzz_pdus++;
        FUZZ_CHECK(rc == 0 || rc == -1, "cf_case_parse returned neither 0 nor -1");
        if (rc == 0)
            cf_case_free(&c);
        else {
            FUZZ_CHECK(memchr(err, '\0', errlens[i]) != NULL, "error not terminated inside its buffer");
            if (errlens[i] > 16)
                FUZZ_CHECK(strncmp(err, "fuzz.case:", 10) == 0, "error does not start with FILE:LINE");
        }
        free(err);
    }
    free(text);
    return 0;
}
