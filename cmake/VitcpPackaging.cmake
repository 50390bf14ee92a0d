# `cpack -G DEB` in a build configured with -DCMAKE_INSTALL_PREFIX=/usr
# (scripts/run.sh package does both): one `vitcp` package with the tools,
# the Wireshark plugin, libvipl (runtime and -dev part), the conformance
# cases, the sample captures, the docs and the man pages.
include(GNUInstallDirs)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")

set(CPACK_PACKAGE_NAME vitcp)
set(CPACK_PACKAGE_VENDOR "vitcp")
set(CPACK_PACKAGE_CONTACT "vitcp developers <vitcp@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "tools for VI/TCP, IFT, PacketWay EEP and WARP: Wireshark plugin, VIPL provider, conformance suite, traffic generator")
set(CPACK_PACKAGE_DESCRIPTION
    "vitcp reads, tests and exercises the first generation of RDMA-over-IP wire protocols.\n\
It installs a Wireshark 4.0 plugin decoding VI/TCP, IFT, PacketWay EEP and WARP, the\n\
reference VI Provider Library libvipl (VIA 1.0 VIPL API over VI/TCP, with vipl.h and\n\
vipl.pc), the conformance tool vitcp-conform with its cases, the traffic generator\n\
vitcp-trafgen, the reference peers vipl-peer and vipl-pingpong, the reference WARP\n\
endpoint warp-peer, the reference IFT endpoint ift-peer, the reference PacketWay EEP\n\
node and router pktway-node, and sample captures.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Shared-library dependencies (libc6, libpcap0.8, libnet1, libwireshark16,
# libglib2.0-0...) from dpkg-shlibdeps; the plugin is built against
# Wireshark 4.0's ABI, so only a 4.0.x Wireshark can load it.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# tshark: the plugin's users decode with it, and it brings wireshark-common
# (dumpcap, capinfos) that the docs' commands use.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libwireshark16 (>= 4.0), libwireshark16 (<< 4.1), tshark (>= 4.0), tshark (<< 4.1)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "man-db")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "wireshark, pkg-config, gcc")
include(CPack)
