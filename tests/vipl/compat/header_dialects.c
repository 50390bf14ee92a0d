/* vipl.h in the C dialects programs of the time were built with (issue 17):
 * both descriptor spellings, both CQ handle spellings and #ifdef on return
 * codes must compile with -pedantic -Werror from C89 on (ctest
 * vipl_header_DIALECT; GCC and Clang take the anonymous unions before C11
 * as an extension, marked so in the header). */
#include <vipl.h>

#if !defined(VIP_SUCCESS) || !defined(VIP_NOT_REACHABLE) || !defined(VIP_ERROR_NOT_SUPPORTED)
#error "return codes must be macros as well as values"
#endif

int main(void)
{
    VIP_DESCRIPTOR d;
    VIP_ERROR_DESCRIPTOR e;
    VIP_AUTODISCOVERY_LIST ad;
    VIP_VI_CALLBACK vcb = 0;
    VIP_CQ_CALLBACK ccb = 0;
    VIP_EVENT_HANDLE ev = 0;
    VIP_SHORT s = -1;
    VIP_WCHAR w = L'v';
    VIP_QOS q = 0;
    d.CS.Control = VIP_CONTROL_OP_SENDRECV;
    d.Control.Length = 4;
    d.DS[0].Local.Length = 4;
    d.Data[1].Length = d.DS[0].Local.Length;
    e.CQHandle = 0;
    ad.NumAdAddrs = 0;
    return (int)(d.CS.Length + d.Data[1].Length) - 8 + (e.CqHandle != 0) + (int)ad.NumAdAddrs + (vcb != 0) +
           (ccb != 0) + (ev != 0) + s + 1 + (w != L'v') + (q != 0);
}
