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
 * Role passive (listen mode, vitcp-conform run --listen): the
 * implementation connects and sends the capture's first PDU, a
 * ConnectRequest; the tester plays the capture's server. The case starts
 * with an accept step, the request becomes an expect (its Message Number
 * is the initial number the others count from, never compared; its
 * discriminators are the implementation's configuration: calling_len,
 * called_len, and so seglen, are wildcards unless 'discriminator
 * capture'), and the captured ConnectAccept answers the live request: what
 * it derived from the captured request it derives from the live one -
 * both discriminators when it copied them (V9), the reliability level
 * when it matched, the MTU lowered to the request's when it was not above
 * the captured request's; its Message ACK names the live request. An
 * accept that broke one of these in the capture is replayed breaking it.
 *
 * NAME.meta is the one capture-case format (conform/meta.h: '#' comments,
 * "KEY VALUE" lines; the shared keys case, title, section, require, frame
 * N ID, verdict fail|advisory, relay yes, hostile yes, packet), with the
 * module's own keys:
 *
 *   role      active                 # active (default): the tester connects;
 *                                    # passive: the implementation connects
 *   tester    client                 # the capture side the tester plays: client
 *                                    # (sent the SYN / first bytes; the default
 *                                    # for role active) or server (the default,
 *                                    # and the only one, for role passive)
 *   capture   other.pcapng           # default NAME.pcapng, else NAME.pcap
 *   wildcard  ack rxposted mtu       # fields never compared (case field names:
 *                                    # msg ack rxposted imm mtu window calling_len
 *                                    # called_len addr handle rlen payload crc
 *                                    # opt.crc ... ; 'data': payload bytes)
 *   wildcard  Send:imm               # a field of one segment type only
 *   only-if   ConnectAccept:opt.crc=1   # after the target's first segment of that
 *                                    # type: a different value is a choice the
 *                                    # draft allows, the case is not applicable
 *   rule      VITCP-3.2-EOM-LAST Send:eom   # a difference in these fields (FIELD or
 *                                    # TYPE:FIELD) breaks this requirement, one of
 *                                    # the 'require' IDs (default: the first);
 *                                    # compared right after the others
 *   echo      yes                    # the target echoes each Send of the tester
 *                                    # (vipl-peer): expect the echo after every
 *                                    # tester message ending with EOM, instead of
 *                                    # the capture's Sends of the other side
 *                                    # (role passive: those after the tester's
 *                                    # first Send; the implementation's own
 *                                    # messages before it are compared)
 *   discriminator run                # the ConnectRequest's Called Discriminator is
 *                                    # the run's (--discriminator, default
 *                                    # vitcp-conform), not the captured one; the
 *                                    # answer's called_len is then a wildcard.
 *                                    # Role passive: 'run' (default) leaves the
 *                                    # request's discriminators uncompared,
 *                                    # 'capture' compares their lengths
 *   nops      skip                   # skip (default): the other side's NOPs are
 *                                    # not expected; compare: they are
 *   timing    2000                   # ms allowed for each answer (default --slack)
 *   timeout   10000                  # ms for the whole case
 *   end       close                  # after the last PDU: close (the tester
 *                                    # closes, default), expect-close (the target
 *                                    # must close), none
 *
 * 'frame N ID' makes the steps of capture frame N check ID; 'nothing-else'
 * is refused ('end' says what follows the last PDU).
 *
 * The target's own choices are compared only when a 'rule' line names them
 * (docs/conformance.md C32): its Rx Descriptors Posted and trailer, and in
 * its CE segment its enables, read window, MTU, CRC and Urgent Marker
 * options (and its level when it connects); the session judges them all
 * the same. Its messages are compared reassembled (C33).
 *
 * Segment Length follows the payload and the trailer: a wildcard on
 * payload, data or crc also makes seglen a wildcard, and in a CE segment
 * one on calling_len or called_len. A difference from the capture is
 * reported after the bytes already in flight went through the session: a
 * rule they break (the rest of an oversized message) is reported instead.
 */
#ifndef CONFORM_CAPCASE_H
#define CONFORM_CAPCASE_H

#include <stdbool.h>
#include <stddef.h>
#include "conform/proto/vitcp.h"

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
