/* Internal: the few pcapng blocks the writer needs (the pcapng spec,
 * draft-ietf-opsawg-pcapng): Section Header, Interface Description and
 * Enhanced Packet blocks with an optional comment, written little-endian
 * whatever the host so the same input gives the same bytes everywhere.
 * libpcap 1.10 reads pcapng but writes only classic pcap. */
#ifndef VITCP_PCAPNG_BLOCK_H
#define VITCP_PCAPNG_BLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Each returns 0, or -1 when the write fails or a part is too large. */
int vn_pcapng_write_shb(FILE *f, const char *comment, const char *application);
int vn_pcapng_write_idb(FILE *f, uint16_t linktype, uint32_t snaplen);
int vn_pcapng_write_epb(FILE *f, uint64_t ts_usec, const uint8_t *data, size_t len, const char *comment);

#endif
