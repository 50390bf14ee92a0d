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
 * with an accept step, the request becomes an expect, and the captured
 * ConnectAccept answers the live request as it answered the captured one
 * (docs/conformance.md C26).
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
 * What is compared (docs/conformance.md): the target's own choices only
 * when a 'rule' line names them (C32), its messages reassembled (C33),
 * Segment Length as the payload, trailer and discriminators allow (C18), a
 * difference after the bytes in flight went through the session (C27).
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

/* What `vitcp-conform show` adds to a replayed ConnectAccept: what it
 * derives from the live request (role passive). */
const char *cf_capcase_send_note(const struct cf_step *st);

#endif
