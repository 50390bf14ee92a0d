/*
 * Capture-based cases (issue 7): a crafted capture plus a few lines of
 * metadata. NAME.pcapng (or NAME.pcap) holds one VI/TCP connection between
 * a tester and a reference implementation; NAME.meta says which side the
 * tester is, which requirements the case tests, what may differ. The
 * loader turns the capture into case steps: every PDU of the tester's side
 * is replayed over a live connection to the target (re-encoded by the wire
 * library, Message ACKs and RDMA read responses mapped to the target's
 * live numbers, packetdrill style), every PDU of the other side becomes an
 * expect compared field by field (message numbers relative to each side's
 * initial number, payload bytes exact) except the wildcard fields.
 *
 * NAME.meta, one directive per line, '#' comments:
 *
 *   case      send-echo-capture      # id (default: NAME)
 *   title     ...                    # free text
 *   section   4.3
 *   require   VITCP-4.3-ACCEPT-ON-MATCH VITCP-3.2-MSG-NUM-SEQ   # at least one
 *   role      active                 # the tester connects (the only role so far)
 *   tester    client                 # the capture side the tester plays: client
 *                                    # (sent the SYN / first bytes) or server
 *   capture   other.pcapng           # default NAME.pcapng, else NAME.pcap
 *   verdict   pass                   # pass: a conforming target matches; fail:
 *                                    # the replay must find a difference
 *   wildcard  ack rxposted mtu       # fields never compared (case field names:
 *                                    # msg ack rxposted imm mtu window calling_len
 *                                    # called_len addr handle rlen payload crc
 *                                    # opt.crc ... ; 'data': payload bytes)
 *   wildcard  Send:imm               # a field of one segment type only
 *   echo                             # the target echoes each Send of the tester
 *                                    # (vipl-peer): expect the echo after every
 *                                    # tester message ending with EOM, instead of
 *                                    # the capture's Sends of the other side
 *   discriminator run                # the ConnectRequest's Called Discriminator is
 *                                    # the run's (--discriminator, default
 *                                    # vitcp-conform), not the captured one; the
 *                                    # answer's called_len is then a wildcard
 *   nops      skip                   # skip (default): the other side's NOPs are
 *                                    # not expected; compare: they are
 *   timing    2000                   # ms allowed for each answer (default --slack)
 *   timeout   10000                  # ms for the whole case
 *   end       close                  # after the last PDU: close (the tester
 *                                    # closes, default), expect-close (the target
 *                                    # must close), none
 *   hostile                          # check the target survives afterwards
 *
 * Segment Length follows the payload and the trailer: a wildcard on
 * payload, data or crc also makes seglen a wildcard.
 */
#ifndef CONFORM_CAPCASE_H
#define CONFORM_CAPCASE_H

#include <stdbool.h>
#include <stddef.h>
#include "conform/case.h"

/* Load NAME.meta and its capture into a case (out owns the PDUs: free with
 * cf_case_free or cf_case_set_free). Returns 0, or -1 with "file:line:
 * reason" (or "capture: reason") in err. */
int cf_capcase_load(const char *meta_path, struct cf_case *out, char *err, size_t errlen);

/* Is a file name a capture case's metadata (NAME.meta), not a traffic
 * generator's run record (NAME.pcap.meta, NAME.pcapng.meta)? */
bool cf_capcase_is_meta_name(const char *name);

/* Print the steps a capture case was compiled to (for `vitcp-conform show`). */
void cf_capcase_describe(FILE *out, const struct cf_case *c);

#endif
