/*
 * vipl.h: the VI Provider Library API (VI Architecture 1.0, Appendix A) in
 * the shape of the Intel VI Architecture Developer's Guide that VIA
 * applications were written against (spec-decisions A1): the reliability
 * level is a bitmask, VipQueryVi takes five parameters, descriptors are
 * {CS; DS[2]}, and the name-service and peer-to-peer calls are present.
 * The spec's own spellings (VIP_REJECTED, VIP_CONTROL_OP_RDMA_READ, ...)
 * are aliases, and so are the spellings of the vendor headers of the time
 * (Giganet cLAN's descriptor {Control; Data[]}, the CQHandle/CqHandle pair):
 * C11 anonymous unions give one layout two names, so code of either style
 * compiles without a macro. Every VIP_RETURN value is also a macro, for
 * #ifdef. docs/vipl.md ("Source compatibility") lists the differences kept.
 *
 * This implementation runs VI/TCP (draft-dicecco-vitcp-01) over TCP sockets;
 * see docs/vipl.md for the provider's design and its decisions.
 */
#ifndef VIPL_H
#define VIPL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif

/* The two spellings are C11 anonymous unions; GCC and Clang also accept
 * them in older modes, and __extension__ keeps -std=c99 -pedantic quiet. */
#if defined(__GNUC__) && !defined(__cplusplus)
#define VIPL_ANON_UNION __extension__ union
#define VIPL_EXTENSION __extension__
#else
#define VIPL_ANON_UNION union
#define VIPL_EXTENSION
#endif

/* ------------------------------------------------------------ basic types */
typedef char VIP_CHAR;
typedef unsigned char VIP_UCHAR;
typedef uint8_t VIP_UINT8;
typedef uint16_t VIP_UINT16;
typedef uint32_t VIP_UINT32;
typedef uint64_t VIP_UINT64;
typedef unsigned short VIP_USHORT;
typedef short VIP_SHORT;
typedef unsigned long VIP_ULONG;
typedef long VIP_LONG;
typedef int VIP_BOOLEAN;
typedef void *VIP_PVOID;
/* The platform's wide character (Windows' WCHAR in the vendor headers), so
 * L"..." literals fit; no VIPL call of this provider takes one. */
typedef wchar_t VIP_WCHAR;
typedef void *VIP_EVENT_HANDLE;

#define VIP_TRUE 1
#define VIP_FALSE 0
/* Wait forever. Any timeout >= 0xFFFFFFFF counts as infinite. */
#define VIP_INFINITE 0xFFFFFFFFul

typedef VIP_PVOID VIP_NIC_HANDLE;
typedef VIP_PVOID VIP_VI_HANDLE;
typedef VIP_PVOID VIP_CQ_HANDLE;
typedef VIP_PVOID VIP_PROTECTION_HANDLE;
typedef VIP_PVOID VIP_CONN_HANDLE;
typedef VIP_UINT32 VIP_MEM_HANDLE;
/* A pointer, as in the Developer's Guide and the cLAN header ("details are
 * not defined"); only 0 (NULL) is supported. */
typedef VIP_PVOID VIP_QOS;

/* ----------------------------------------------------------- return codes */
typedef enum {
    VIP_SUCCESS,
    VIP_NOT_DONE,
    VIP_INVALID_PARAMETER,
    VIP_ERROR_RESOURCE,
    VIP_TIMEOUT,
    VIP_REJECT,
    VIP_INVALID_RELIABILITY_LEVEL,
    VIP_INVALID_MTU,
    VIP_INVALID_QOS,
    VIP_INVALID_PTAG,
    VIP_INVALID_RDMAREAD,
    VIP_DESCRIPTOR_ERROR,
    VIP_INVALID_STATE,
    VIP_ERROR_NAMESERVICE,
    VIP_NO_MATCH,
    VIP_NOT_REACHABLE,
    VIP_ERROR_NOT_SUPPORTED
} VIP_RETURN;
/* Macros as well as values: programs test for a code with #ifdef. */
#define VIP_SUCCESS VIP_SUCCESS
#define VIP_NOT_DONE VIP_NOT_DONE
#define VIP_INVALID_PARAMETER VIP_INVALID_PARAMETER
#define VIP_ERROR_RESOURCE VIP_ERROR_RESOURCE
#define VIP_TIMEOUT VIP_TIMEOUT
#define VIP_REJECT VIP_REJECT
#define VIP_INVALID_RELIABILITY_LEVEL VIP_INVALID_RELIABILITY_LEVEL
#define VIP_INVALID_MTU VIP_INVALID_MTU
#define VIP_INVALID_QOS VIP_INVALID_QOS
#define VIP_INVALID_PTAG VIP_INVALID_PTAG
#define VIP_INVALID_RDMAREAD VIP_INVALID_RDMAREAD
#define VIP_DESCRIPTOR_ERROR VIP_DESCRIPTOR_ERROR
#define VIP_INVALID_STATE VIP_INVALID_STATE
#define VIP_ERROR_NAMESERVICE VIP_ERROR_NAMESERVICE
#define VIP_NO_MATCH VIP_NO_MATCH
#define VIP_NOT_REACHABLE VIP_NOT_REACHABLE
#define VIP_ERROR_NOT_SUPPORTED VIP_ERROR_NOT_SUPPORTED
#define VIP_REJECTED VIP_REJECT /* the spec's spelling in 9.4.4 */
#define VIP_ERROR VIP_DESCRIPTOR_ERROR /* the cLAN header's alias */

/* ---------------------------------------------------------- reliability */
/* 16 bits, as in the Developer's Guide and the cLAN header (the spec's
 * enum would be an int); the bits below and VIP_SERVICE_DFC fit. */
typedef VIP_USHORT VIP_RELIABILITY_LEVEL;
#define VIP_SERVICE_UNRELIABLE 0x01u
#define VIP_SERVICE_RELIABLE_DELIVERY 0x02u
#define VIP_SERVICE_RELIABLE_RECEPTION 0x04u
/* OR into ReliabilityLevel to ask for VI/TCP descriptor flow control (A12). */
#define VIP_SERVICE_DFC 0x8000u

typedef enum {
    VIP_STATE_IDLE,
    VIP_STATE_CONNECTED,
    VIP_STATE_CONNECT_PENDING,
    VIP_STATE_ERROR
} VIP_VI_STATE;

/* ----------------------------------------------------------- descriptors
 * Appendix B: little-endian in memory, 64-byte aligned, in registered memory. */
struct _VIP_DESCRIPTOR;
typedef union {
    VIP_UINT64 AddressBits;
    VIP_PVOID Address;
    struct _VIP_DESCRIPTOR *Descriptor; /* the cLAN header's third view */
} VIP_PVOID64;

typedef struct {
    VIP_PVOID64 Next;
    VIP_MEM_HANDLE NextHandle;
    VIP_UINT16 SegCount;
    VIP_UINT16 Control;
    VIP_UINT32 Reserved;
    VIP_UINT32 ImmediateData;
    VIP_UINT32 Length;
    VIP_UINT32 Status;
} VIP_CONTROL_SEGMENT;

typedef struct {
    VIP_PVOID64 Data;
    VIP_MEM_HANDLE Handle;
    VIP_UINT32 Reserved;
} VIP_ADDRESS_SEGMENT;

typedef struct {
    VIP_PVOID64 Data;
    VIP_MEM_HANDLE Handle;
    VIP_UINT32 Length;
} VIP_DATA_SEGMENT;

typedef union {
    VIP_ADDRESS_SEGMENT Remote;
    VIP_DATA_SEGMENT Local;
} VIP_DESCRIPTOR_SEGMENT;

/* A descriptor has SegCount segments after CS; allocate more room than
 * sizeof(VIP_DESCRIPTOR) for more than two. Two spellings, one layout: the
 * Developer's Guide's {CS; DS[]} (DS[i].Local, DS[i].Remote) and Giganet
 * cLAN's default {Control; Data[]} (Data[i] is a VIP_DATA_SEGMENT, whose
 * first two fields an address segment shares). So d->Control.Control is the
 * control field, as cLAN code writes it. */
VIPL_EXTENSION typedef struct _VIP_DESCRIPTOR {
    VIPL_ANON_UNION {
        VIP_CONTROL_SEGMENT CS;
        VIP_CONTROL_SEGMENT Control;
    };
    VIPL_ANON_UNION {
        VIP_DESCRIPTOR_SEGMENT DS[2];
        VIP_DATA_SEGMENT Data[2];
    };
} VIP_DESCRIPTOR;

#define VIP_DESCRIPTOR_ALIGNMENT 64

/* Control field */
#define VIP_CONTROL_OP_SENDRECV 0x0000u
#define VIP_CONTROL_OP_RDMAWRITE 0x0001u
#define VIP_CONTROL_OP_RDMAREAD 0x0002u
#define VIP_CONTROL_OP_RESERVED 0x0003u
#define VIP_CONTROL_OP_MASK 0x0003u
#define VIP_CONTROL_IMMEDIATE 0x0004u
#define VIP_CONTROL_QFENCE 0x0008u
#define VIP_CONTROL_RESERVED 0xFFF0u
#define VIP_CONTROL_OP_RDMA_READ VIP_CONTROL_OP_RDMAREAD /* the spec's spelling */

/* Status field */
#define VIP_STATUS_DONE 0x00000001u
#define VIP_STATUS_FORMAT_ERROR 0x00000002u
#define VIP_STATUS_PROTECTION_ERROR 0x00000004u
#define VIP_STATUS_LENGTH_ERROR 0x00000008u
#define VIP_STATUS_PARTIAL_ERROR 0x00000010u
#define VIP_STATUS_DESC_FLUSHED_ERROR 0x00000020u
#define VIP_STATUS_TRANSPORT_ERROR 0x00000040u
#define VIP_STATUS_RDMA_PROT_ERROR 0x00000080u
#define VIP_STATUS_REMOTE_DESC_ERROR 0x00000100u
#define VIP_STATUS_ERROR_MASK 0x000001FEu
#define VIP_STATUS_OP_SEND 0x00000000u
#define VIP_STATUS_OP_RECEIVE 0x00010000u
#define VIP_STATUS_OP_RDMA_WRITE 0x00020000u
#define VIP_STATUS_OP_REMOTE_RDMA_WRITE 0x00030000u
#define VIP_STATUS_OP_RDMA_READ 0x00040000u
#define VIP_STATUS_OP_MASK 0x00070000u
#define VIP_STATUS_IMMEDIATE 0x00080000u
#define VIP_STATUS_RESERVED 0xFFF0FE00u

/* ------------------------------------------------------ error descriptor */
typedef enum _VIP_RESOURCE_CODE {
    VIP_RESOURCE_NIC,
    VIP_RESOURCE_VI,
    VIP_RESOURCE_CQ,
    VIP_RESOURCE_DESCRIPTOR
} VIP_RESOURCE_CODE;

typedef enum _VIP_ERROR_CODE {
    VIP_ERROR_POST_DESC,
    VIP_ERROR_CONN_LOST,
    VIP_ERROR_RECVQ_EMPTY,
    VIP_ERROR_VI_OVERRUN,
    VIP_ERROR_RDMAW_PROT,
    VIP_ERROR_RDMAW_DATA,
    VIP_ERROR_RDMAW_ABORT,
    VIP_ERROR_RDMAR_PROT,
    VIP_ERROR_COMP_PROT,
    VIP_ERROR_RDMA_TRANSPORT,
    VIP_ERROR_CATASTROPHIC
} VIP_ERROR_CODE;

typedef struct _VIP_ERROR_DESCRIPTOR {
    VIP_NIC_HANDLE NicHandle;
    VIP_VI_HANDLE ViHandle;
    VIPL_ANON_UNION {
        VIP_CQ_HANDLE CqHandle; /* the spec's spelling (9.10.3) */
        VIP_CQ_HANDLE CQHandle; /* the Developer's Guide's and vendors' */
    };
    VIP_DESCRIPTOR *DescriptorPtr;
    VIP_ULONG OpCode;
    VIP_RESOURCE_CODE ResourceCode;
    VIP_ERROR_CODE ErrorCode;
} VIP_ERROR_DESCRIPTOR;

/* ------------------------------------------------------------ attributes */
typedef struct _VIP_NIC_ATTRIBUTES {
    VIP_CHAR Name[64];
    VIP_ULONG HardwareVersion;
    VIP_ULONG ProviderVersion;
    VIP_UINT16 NicAddressLen;
    const VIP_UINT8 *LocalNicAddress;
    VIP_BOOLEAN ThreadSafe;
    VIP_UINT16 MaxDiscriminatorLen;
    VIP_ULONG MaxRegisterBytes;
    VIP_ULONG MaxRegisterRegions;
    VIP_ULONG MaxRegisterBlockBytes;
    VIP_ULONG MaxVI;
    VIP_ULONG MaxDescriptorsPerQueue;
    VIP_ULONG MaxSegmentsPerDesc;
    VIP_ULONG MaxCQ;
    VIP_ULONG MaxCQEntries;
    VIP_ULONG MaxTransferSize;
    VIP_ULONG NativeMTU;
    VIP_ULONG MaxPtags;
    VIP_RELIABILITY_LEVEL ReliabilityLevelSupport;
    VIP_RELIABILITY_LEVEL RDMAReadSupport;
} VIP_NIC_ATTRIBUTES;

typedef struct _VIP_VI_ATTRIBUTES {
    VIP_RELIABILITY_LEVEL ReliabilityLevel;
    VIP_ULONG MaxTransferSize;
    VIP_QOS QoS;
    VIP_PROTECTION_HANDLE Ptag;
    VIP_BOOLEAN EnableRdmaWrite;
    VIP_BOOLEAN EnableRdmaRead;
} VIP_VI_ATTRIBUTES;

typedef struct _VIP_MEM_ATTRIBUTES {
    VIP_PROTECTION_HANDLE Ptag;
    VIP_BOOLEAN EnableRdmaWrite;
    VIP_BOOLEAN EnableRdmaRead;
} VIP_MEM_ATTRIBUTES;

/* Host address (4 bytes IPv4 or 16 bytes IPv6) followed by the discriminator;
 * allocate HostAddressLen + DiscriminatorLen bytes behind the header. */
typedef struct _VIP_NET_ADDRESS {
    VIP_UINT16 HostAddressLen;
    VIP_UINT16 DiscriminatorLen;
    VIP_UINT8 HostAddress[1];
} VIP_NET_ADDRESS;

/* ------------------------------------------------------------- functions */
typedef void (*VIP_VI_NOTIFY_HANDLER)(VIP_PVOID Context, VIP_NIC_HANDLE NicHandle,
                                      VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR *DescriptorPtr);
typedef void (*VIP_CQ_NOTIFY_HANDLER)(VIP_PVOID Context, VIP_NIC_HANDLE NicHandle,
                                      VIP_VI_HANDLE ViHandle, VIP_BOOLEAN RecvQueue);
typedef void (*VIP_ERROR_HANDLER)(VIP_PVOID Context, VIP_ERROR_DESCRIPTOR *ErrorDesc);
/* The vendor headers' names of the two notify handler types. */
typedef VIP_VI_NOTIFY_HANDLER VIP_VI_CALLBACK;
typedef VIP_CQ_NOTIFY_HANDLER VIP_CQ_CALLBACK;

/* VipQuerySystemManagementInfo InfoType of the Developer's Guide. This
 * provider discovers no hosts: VIP_ERROR_NOT_SUPPORTED. */
#define VIP_SMI_AUTODISCOVERY ((VIP_ULONG)1)
typedef struct {
    VIP_ULONG NumberOfHops;
    VIP_NET_ADDRESS **ADAddrArray;
    VIP_ULONG NumAdAddrs;
} VIP_AUTODISCOVERY_LIST;

/* Hardware connection */
VIP_RETURN VipOpenNic(IN const VIP_CHAR *DeviceName, OUT VIP_NIC_HANDLE *NicHandle);
VIP_RETURN VipCloseNic(IN VIP_NIC_HANDLE NicHandle);

/* Endpoints */
VIP_RETURN VipCreateVi(IN VIP_NIC_HANDLE NicHandle, IN VIP_VI_ATTRIBUTES *ViAttribs,
                       IN VIP_CQ_HANDLE SendCQHandle, IN VIP_CQ_HANDLE RecvCQHandle,
                       OUT VIP_VI_HANDLE *ViHandle);
VIP_RETURN VipDestroyVi(IN VIP_VI_HANDLE ViHandle);

/* Connection management */
VIP_RETURN VipConnectWait(IN VIP_NIC_HANDLE NicHandle, IN VIP_NET_ADDRESS *LocalAddr,
                          IN VIP_ULONG Timeout, OUT VIP_NET_ADDRESS *RemoteAddr,
                          OUT VIP_VI_ATTRIBUTES *RemoteViAttribs, OUT VIP_CONN_HANDLE *ConnHandle);
VIP_RETURN VipConnectAccept(IN VIP_CONN_HANDLE ConnHandle, IN VIP_VI_HANDLE ViHandle);
VIP_RETURN VipConnectReject(IN VIP_CONN_HANDLE ConnHandle);
VIP_RETURN VipConnectRequest(IN VIP_VI_HANDLE ViHandle, IN VIP_NET_ADDRESS *LocalAddr,
                             IN VIP_NET_ADDRESS *RemoteAddr, IN VIP_ULONG Timeout,
                             OUT VIP_VI_ATTRIBUTES *RemoteViAttribs);
VIP_RETURN VipDisconnect(IN VIP_VI_HANDLE ViHandle);
VIP_RETURN VipConnectPeerRequest(IN VIP_VI_HANDLE ViHandle, IN VIP_NET_ADDRESS *LocalAddr,
                                 IN VIP_NET_ADDRESS *RemoteAddr, IN VIP_ULONG Timeout);
VIP_RETURN VipConnectPeerDone(IN VIP_VI_HANDLE ViHandle, OUT VIP_VI_ATTRIBUTES *RemoteViAttribs);
VIP_RETURN VipConnectPeerWait(IN VIP_VI_HANDLE ViHandle, OUT VIP_VI_ATTRIBUTES *RemoteViAttribs);

/* Memory protection and registration */
VIP_RETURN VipCreatePtag(IN VIP_NIC_HANDLE NicHandle, OUT VIP_PROTECTION_HANDLE *ProtectionTag);
VIP_RETURN VipDestroyPtag(IN VIP_NIC_HANDLE NicHandle, IN VIP_PROTECTION_HANDLE ProtectionTag);
VIP_RETURN VipRegisterMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID VirtualAddress,
                          IN VIP_ULONG Length, IN VIP_MEM_ATTRIBUTES *MemAttribs,
                          OUT VIP_MEM_HANDLE *MemoryHandle);
VIP_RETURN VipDeregisterMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID VirtualAddress,
                            IN VIP_MEM_HANDLE MemoryHandle);

/* Data transfer and completion */
VIP_RETURN VipPostSend(IN VIP_VI_HANDLE ViHandle, IN VIP_DESCRIPTOR *DescriptorPtr,
                       IN VIP_MEM_HANDLE MemoryHandle);
VIP_RETURN VipSendDone(IN VIP_VI_HANDLE ViHandle, OUT VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipSendWait(IN VIP_VI_HANDLE ViHandle, IN VIP_ULONG TimeOut,
                       OUT VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipPostRecv(IN VIP_VI_HANDLE ViHandle, IN VIP_DESCRIPTOR *DescriptorPtr,
                       IN VIP_MEM_HANDLE MemoryHandle);
VIP_RETURN VipRecvDone(IN VIP_VI_HANDLE ViHandle, OUT VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipRecvWait(IN VIP_VI_HANDLE ViHandle, IN VIP_ULONG TimeOut,
                       OUT VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipCQDone(IN VIP_CQ_HANDLE CQHandle, OUT VIP_VI_HANDLE *ViHandle,
                     OUT VIP_BOOLEAN *RecvQueue);
VIP_RETURN VipCQWait(IN VIP_CQ_HANDLE CQHandle, IN VIP_ULONG Timeout, OUT VIP_VI_HANDLE *ViHandle,
                     OUT VIP_BOOLEAN *RecvQueue);
VIP_RETURN VipSendNotify(IN VIP_VI_HANDLE ViHandle, IN VIP_PVOID Context,
                         IN VIP_VI_NOTIFY_HANDLER Handler);
VIP_RETURN VipRecvNotify(IN VIP_VI_HANDLE ViHandle, IN VIP_PVOID Context,
                         IN VIP_VI_NOTIFY_HANDLER Handler);
VIP_RETURN VipCQNotify(IN VIP_CQ_HANDLE CQHandle, IN VIP_PVOID Context,
                       IN VIP_CQ_NOTIFY_HANDLER Handler);

/* Completion queues */
VIP_RETURN VipCreateCQ(IN VIP_NIC_HANDLE NicHandle, IN VIP_ULONG EntryCount,
                       OUT VIP_CQ_HANDLE *CQHandle);
VIP_RETURN VipDestroyCQ(IN VIP_CQ_HANDLE CQHandle);
VIP_RETURN VipResizeCQ(IN VIP_CQ_HANDLE CQHandle, IN VIP_ULONG EntryCount);

/* Querying information */
VIP_RETURN VipQueryNic(IN VIP_NIC_HANDLE NicHandle, OUT VIP_NIC_ATTRIBUTES *Attributes);
VIP_RETURN VipSetViAttributes(IN VIP_VI_HANDLE ViHandle, IN VIP_VI_ATTRIBUTES *Attributes);
VIP_RETURN VipQueryVi(IN VIP_VI_HANDLE ViHandle, OUT VIP_VI_STATE *State,
                      OUT VIP_VI_ATTRIBUTES *Attributes, OUT VIP_BOOLEAN *ViSendQEmpty,
                      OUT VIP_BOOLEAN *ViRecvQEmpty);
VIP_RETURN VipSetMemAttributes(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID Address,
                               IN VIP_MEM_HANDLE MemHandle, IN VIP_MEM_ATTRIBUTES *MemAttribs);
VIP_RETURN VipQueryMem(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID Address,
                       IN VIP_MEM_HANDLE MemHandle, OUT VIP_MEM_ATTRIBUTES *MemAttribs);
/* InfoType VIPL_SMI_STATISTICS fills a VIPL_STATISTICS; VIP_SMI_AUTODISCOVERY
 * gives VIP_ERROR_NOT_SUPPORTED, other types VIP_INVALID_PARAMETER. */
VIP_RETURN VipQuerySystemManagementInfo(IN VIP_NIC_HANDLE NicHandle, IN VIP_ULONG InfoType,
                                        OUT VIP_PVOID SysManInfo);

/* Error handling: Handler NULL restores the default (a line on stderr). */
VIP_RETURN VipErrorCallback(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID Context,
                            IN VIP_ERROR_HANDLER Handler);

/* Name service: names are "host" or "host:port" (A15); NSInitInfo unused. */
VIP_RETURN VipNSInit(IN VIP_NIC_HANDLE NicHandle, IN VIP_PVOID NSInitInfo);
VIP_RETURN VipNSGetHostByName(IN VIP_NIC_HANDLE NicHandle, IN VIP_CHAR *Name,
                              OUT VIP_NET_ADDRESS *Address, IN VIP_ULONG NameIndex);
VIP_RETURN VipNSGetHostByAddr(IN VIP_NIC_HANDLE NicHandle, IN VIP_NET_ADDRESS *Address,
                              OUT VIP_CHAR *Name, IN OUT VIP_ULONG *NameLen);
VIP_RETURN VipNSShutdown(IN VIP_NIC_HANDLE NicHandle);

/* ------------------------------------------- vitcp provider extensions
 * Not part of the VIPL of the time; for tools and tests of this provider. */
/* Not 1: that is VIP_SMI_AUTODISCOVERY. */
#define VIPL_SMI_STATISTICS 0x56490001ul
typedef struct {
    VIP_UINT64 SegmentsSent;
    VIP_UINT64 SegmentsReceived;
    VIP_UINT64 BytesSent;
    VIP_UINT64 BytesReceived;
    VIP_UINT64 CrcErrors;
    VIP_UINT64 ProtocolErrors;
    VIP_UINT64 ConnectionsAccepted;
    VIP_UINT64 ConnectionsRequested;
    /* Out of descriptors (EMFILE/ENFILE): idle half-open connections closed
     * to let a new one in, and connections refused at once (no idle one). */
    VIP_UINT64 ConnectionsShed;
    VIP_UINT64 ConnectionsRefusedNoFds;
} VIPL_STATISTICS;

/* TCP port the NIC listens on (useful with a device name "host:0"). */
VIP_RETURN ViplNicListenPort(IN VIP_NIC_HANDLE NicHandle, OUT VIP_UINT16 *Port);
/* TCP port used to reach a host address that the name service has not mapped. */
VIP_RETURN ViplNicSetRemotePort(IN VIP_NIC_HANDLE NicHandle, IN VIP_UINT16 Port);
/* Short name of a return code ("VIP_SUCCESS", ...). */
const char *ViplReturnName(VIP_RETURN code);

#ifdef __cplusplus
}
#endif

#endif
