/*
 * Wire-library findings as Wireshark expert items, shared by the VI/TCP,
 * IFT, PacketWay and WARP dissectors: one expert field per catalog rule and
 * severity ("<proto>.expert.<slug>.<error|warning|note>"), each item's text
 * starting with the rule's requirement ID, plus a "<proto>.rule" string
 * field so that a display filter can pick one rule at any severity. The
 * verdicts themselves come from the wire library, never from here.
 */
#ifndef VITCP_RULE_EXPERTS_H
#define VITCP_RULE_EXPERTS_H

#include <epan/packet.h>
#include <epan/expert.h>
#include <vitcp/findings.h>

#define RULE_EXPERT_SEVERITIES 3 /* error, warning, note: enum vw_severity */

typedef struct {
    int hf_rule;
    gint ett_rule;
    expert_field (*ei)[RULE_EXPERT_SEVERITIES]; /* VW_REQ_COUNT rows */
    gboolean *registered;                        /* VW_REQ_COUNT entries */
    expert_field *ei_other;                      /* a rule outside id_prefixes, per severity */
} rule_experts_t;

/* Register the fields of every catalog rule whose ID starts with one of
 * id_prefixes (NULL-terminated) under protocol proto, whose filter name is
 * filter_name ("ift"). strip_prefix (or NULL) is left out of the field
 * names: VI/TCP's published names are "vitcp.expert.3_6_crc_valid.error".
 * With sentences, an expert field's summary is the catalog's statement of
 * how the rule is checked, as a sentence; without, the draft's quote.
 * Call once from proto_register_<proto>. */
void rule_experts_register(rule_experts_t *re, int proto, const char *filter_name,
                           const char *const *id_prefixes, const char *strip_prefix, gboolean sentences);

/* One expert item "[ID] detail" at offset/length of tvb (clipped to the
 * captured bytes). */
proto_item *rule_expert_add(const rule_experts_t *re, proto_tree *tree, packet_info *pinfo,
                            tvbuff_t *tvb, const struct vw_finding *finding);

/* Every finding of a PDU, in order. */
void rule_experts_add_all(const rule_experts_t *re, proto_tree *tree, packet_info *pinfo,
                          tvbuff_t *tvb, const struct vw_finding *findings, guint count);

/* A PDU's findings copied into file scope (first pass), so later passes
 * show the verdicts decided in capture order. */
typedef struct {
    guint count;
    struct vw_finding *items;
} rule_findings_t;

void rule_findings_keep(rule_findings_t *dst, const struct vw_findings *src);

#endif
