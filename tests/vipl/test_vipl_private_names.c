/* libvipl.so exports the VIPL API and nothing of its internals (issue 17,
 * point 4): a program may define globals named like the provider's helpers
 * (now_ms, conn_free, handle_add...) and still gets a working provider,
 * because the library binds its own calls locally (libvipl.map). Linked
 * against the shared library, as a VIA program is. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#ifndef LIBVIPL_PATH
#error "LIBVIPL_PATH: the built libvipl.so"
#endif

/* Decoys: had the library exported these names, its own calls would reach
 * them (ELF interposition) and abort. */
long now_ms(void) { abort(); }
void conn_free(void) { abort(); }
int handle_add(void) { abort(); }
int handle_valid(void) { abort(); }
long deadline_after(void) { abort(); }
void nic_wake(void) { abort(); }
int desc_gather(void) { abort(); }
int desc_scatter(void) { abort(); }

static void only_the_api_is_exported(void **state)
{
    (void)state;
    void *lib = dlopen(LIBVIPL_PATH, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    static const char *const api[] = {"VipOpenNic", "VipCloseNic", "VipConnectRequest", "VipPostSend",
                                      "VipRecvWait", "ViplReturnName", "ViplNicListenPort"};
    for (size_t i = 0; i < sizeof api / sizeof api[0]; i++)
        assert_non_null(dlsym(lib, api[i]));
    static const char *const internal[] = {"now_ms", "conn_free", "handle_add", "handle_valid",
                                           "deadline_after", "nic_wake", "desc_gather", "desc_scatter",
                                           "vw_vitcp_encode", "vw_crc32c"};
    for (size_t i = 0; i < sizeof internal / sizeof internal[0]; i++) {
        void *sym = dlsym(lib, internal[i]);
        if (sym)
            fail_msg("libvipl.so exports internal symbol %s", internal[i]);
    }
    dlclose(lib);
}

static void a_transfer_works_beside_decoys(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, "", "", VIP_SERVICE_RELIABLE_DELIVERY, 1);
    for (unsigned i = 0; i < 3000; i++)
        p.a.data[i] = (uint8_t)(i * 7);
    h_post_send(&p.a, p.va, 0, VIP_CONTROL_OP_SENDRECV, 0, 3000, 0, 0, 0, 0);
    h_wait_send(p.va);
    VIP_DESCRIPTOR *d = h_wait_recv(p.vb);
    assert_int_equal(d->CS.Length, 3000);
    assert_memory_equal(p.b.data, p.a.data, 3000);
    h_pair_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(only_the_api_is_exported),
        cmocka_unit_test(a_transfer_works_beside_decoys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
