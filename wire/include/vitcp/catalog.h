/*
 * The one catalog of requirements. Every rule that any vitcp component checks
 * (decoder, framer, dissector expert info, lint, conformance case, provider
 * API test) names an entry here. Entries live in wire/catalog/<protocol>.def
 * as X-macro lines:
 *
 *   VW_REQ(SYMBOL, "ID", LEVEL, "section", CHECK, "quoted text", "how/why")
 *
 * SYMBOL becomes VW_REQ_SYMBOL; "ID" is the stable public identifier
 * (VITCP-<section>-<slug>, IFT-..., EEP-..., WARP-..., VIA-...).
 * LEVEL is the draft's keyword (implied rules that no keyword states use
 * IMPLIED; rules fixed by ../shared/spec-decisions.md use DECISION).
 * CHECK says where the rule is verified: ACTIVE against a live peer, PASSIVE
 * from a capture, API through the provider library, UNTESTABLE (with reason).
 */
#ifndef VITCP_CATALOG_H
#define VITCP_CATALOG_H

#include <stddef.h>

enum vw_level {
    VW_LEVEL_MUST,
    VW_LEVEL_MUST_NOT,
    VW_LEVEL_SHOULD,
    VW_LEVEL_SHOULD_NOT,
    VW_LEVEL_MAY,
    VW_LEVEL_IMPLIED,  /* a format rule that no keyword states (lengths, ranges) */
    VW_LEVEL_DECISION, /* fixed by spec-decisions.md where the draft is silent */
};

/* Where a rule is checked; a rule may be checked in several places (bit set). */
enum vw_check {
    VW_CHECK_ACTIVE = 1u << 0,
    VW_CHECK_PASSIVE = 1u << 1,
    VW_CHECK_API = 1u << 2,
    VW_CHECK_UNTESTABLE = 1u << 3,
};
/* Shorthands for the .def files. */
#define VW_ACTIVE VW_CHECK_ACTIVE
#define VW_PASSIVE VW_CHECK_PASSIVE
#define VW_API VW_CHECK_API
#define VW_UNTESTABLE VW_CHECK_UNTESTABLE
#define VW_ACTIVE_PASSIVE (VW_CHECK_ACTIVE | VW_CHECK_PASSIVE)
#define MUST VW_LEVEL_MUST
#define MUST_NOT VW_LEVEL_MUST_NOT
#define SHOULD VW_LEVEL_SHOULD
#define SHOULD_NOT VW_LEVEL_SHOULD_NOT
#define MAY VW_LEVEL_MAY
#define IMPLIED VW_LEVEL_IMPLIED
#define DECISION VW_LEVEL_DECISION

enum vw_req {
    VW_REQ_NONE = 0,
#define VW_REQ(sym, id, level, section, check, text, reason) VW_REQ_##sym,
#include "vitcp_catalog.def"
#undef VW_REQ
    VW_REQ_COUNT
};

#undef MUST
#undef MUST_NOT
#undef SHOULD
#undef SHOULD_NOT
#undef MAY
#undef IMPLIED
#undef DECISION

struct vw_req_info {
    const char *id;      /* "VITCP-3.6-CRC-ONLY-IF-NEGOTIATED" */
    enum vw_level level;
    const char *section; /* "3.6", or "V3" for a spec decision */
    unsigned check;      /* enum vw_check bits */
    const char *text;    /* short quote of the draft */
    const char *reason;  /* how it is checked, or why it cannot be */
};

/* Entry for a rule; never NULL (VW_REQ_NONE and out-of-range give a stub). */
const struct vw_req_info *vw_req_info(enum vw_req req);
/* Public ID string of a rule ("" for VW_REQ_NONE). */
const char *vw_req_id(enum vw_req req);
/* Look a rule up by its public ID (case-sensitive); VW_REQ_NONE if unknown. */
enum vw_req vw_req_by_id(const char *id);
/* "MUST", "SHOULD", ... */
const char *vw_level_name(enum vw_level level);
/* Number of catalog entries (VW_REQ_COUNT - 1). */
size_t vw_req_count(void);

#endif
