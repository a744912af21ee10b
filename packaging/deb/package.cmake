# The Debian package (scripts/build-deb runs it; docs/decisions.md "Debian package: CPack").
#
# The binary and its man page are the default ("Unspecified") install component: a plain
# `cmake --install build --prefix /usr/local` installs bin/roce_qos_exporter and
# share/man/man8/roce_qos_exporter.8.gz, so the unit of deploy/systemd/, whose Documentation= names
# man:roce_qos_exporter(8), passes `systemd-analyze verify` on that path too (tests/systemd/run).
# Everything else a package adds (unit, /etc/default, docs) is the component "system", excluded
# from that plain install; CPack installs both components into one package.
#
# The man page is part of `all` when help2man is found (scripts/install-deps --build-only installs
# it): help2man from --help, plus packaging/deb/man.h2m.
# Generated files of the target deb-files (not part of `all`; scripts/build-deb builds it):
#   roce_qos_exporter.8.gz  the man page above
#   changelog.gz            one entry for the project version (native package)
#   policy-default.yaml     `roce_qos_exporter policy show-default`
#   docs/*.md.gz, README.md.gz  the project's docs, which --help and the man page cite as docs/NAME.md

set(ROCEQOS_DEB_NAME roce-qos-exporter)
set(ROCEQOS_DEB_SRC ${CMAKE_SOURCE_DIR}/packaging/deb)
set(ROCEQOS_DEB_OUT ${CMAKE_BINARY_DIR}/packaging/deb)
set(ROCEQOS_DEB_DOC share/doc/${ROCEQOS_DEB_NAME})
file(MAKE_DIRECTORY ${ROCEQOS_DEB_OUT})

# Reproducible dates: the commit's, unless SOURCE_DATE_EPOCH says otherwise.
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  set(ROCEQOS_DEB_EPOCH $ENV{SOURCE_DATE_EPOCH})
else()
  execute_process(COMMAND git log -1 --format=%ct WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                  OUTPUT_VARIABLE ROCEQOS_DEB_EPOCH OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT ROCEQOS_DEB_EPOCH)
    set(ROCEQOS_DEB_EPOCH 0)
  endif()
endif()
set(ROCEQOS_DEB_MAINTAINER "roce_qos_exporter maintainers <roce-qos-exporter@example.org>"
    CACHE STRING "Maintainer field of the Debian package")

find_program(ROCEQOS_HELP2MAN help2man)
find_program(ROCEQOS_GZIP gzip)
add_custom_command(
  OUTPUT ${ROCEQOS_DEB_OUT}/roce_qos_exporter.8.gz
  COMMAND ${CMAKE_COMMAND} -E env SOURCE_DATE_EPOCH=${ROCEQOS_DEB_EPOCH}
          ${ROCEQOS_HELP2MAN} --no-info --section=8 --include=${ROCEQOS_DEB_SRC}/man.h2m
          # The footer's left field: the whole first line of --version, with its revision, is too
          # long for it and overprints the date ("revision November...2026").
          --version-string=${PROJECT_VERSION}
          "--name=Prometheus exporter and QoS drift alerter for RoCEv2 on mlx5 NICs"
          --output=${ROCEQOS_DEB_OUT}/roce_qos_exporter.8 $<TARGET_FILE:roce_qos_exporter>
  COMMAND ${ROCEQOS_GZIP} -9nf ${ROCEQOS_DEB_OUT}/roce_qos_exporter.8
  DEPENDS roce_qos_exporter ${ROCEQOS_DEB_SRC}/man.h2m
  COMMENT "help2man: roce_qos_exporter(8)" VERBATIM)
if(ROCEQOS_HELP2MAN)
  add_custom_target(man-page ALL DEPENDS ${ROCEQOS_DEB_OUT}/roce_qos_exporter.8.gz)
  install(FILES ${ROCEQOS_DEB_OUT}/roce_qos_exporter.8.gz DESTINATION share/man/man8)
else()
  message(WARNING "help2man not found: roce_qos_exporter(8) is neither built nor installed, and "
                  "`systemd-analyze verify` of deploy/systemd/'s unit (Documentation=man:"
                  "roce_qos_exporter(8)) will report it missing. scripts/install-deps "
                  "--build-only installs help2man.")
endif()
add_custom_command(
  OUTPUT ${ROCEQOS_DEB_OUT}/changelog.gz
  COMMAND ${CMAKE_COMMAND} -DVERSION=${PROJECT_VERSION} -DEPOCH=${ROCEQOS_DEB_EPOCH}
          -DMAINTAINER=${ROCEQOS_DEB_MAINTAINER} -DPACKAGE=${ROCEQOS_DEB_NAME}
          -DOUT=${ROCEQOS_DEB_OUT}/changelog -P ${ROCEQOS_DEB_SRC}/changelog.cmake
  COMMAND ${ROCEQOS_GZIP} -9nf ${ROCEQOS_DEB_OUT}/changelog
  DEPENDS ${ROCEQOS_DEB_SRC}/changelog.cmake
  COMMENT "Debian changelog for ${PROJECT_VERSION}" VERBATIM)
add_custom_command(
  OUTPUT ${ROCEQOS_DEB_OUT}/policy-default.yaml
  COMMAND sh -c "\"$1\" policy show-default > \"$2\"" sh $<TARGET_FILE:roce_qos_exporter>
          ${ROCEQOS_DEB_OUT}/policy-default.yaml
  DEPENDS roce_qos_exporter
  COMMENT "roce_qos_exporter policy show-default" VERBATIM)
# The docs, compressed as Debian policy 12.3 asks of /usr/share/doc files over 4 kB (dh_compress's
# job under debhelper): every docs/**/*.md, so no docs/NAME.md that --help, the man page or a
# packaged example cites is missing (tests/checks/deploy/deb-package.sh checks that).
file(GLOB_RECURSE ROCEQOS_DEB_DOCS CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR}
     ${CMAKE_SOURCE_DIR}/docs/*.md)
set(ROCEQOS_DEB_DOCS_GZ)
foreach(doc README.md ${ROCEQOS_DEB_DOCS})
  set(gz ${ROCEQOS_DEB_OUT}/doc/${doc}.gz)
  get_filename_component(dir ${gz} DIRECTORY)
  add_custom_command(
    OUTPUT ${gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND sh -c "\"$1\" -9nc \"$2\" > \"$3\"" sh ${ROCEQOS_GZIP} ${CMAKE_SOURCE_DIR}/${doc}
            ${gz}
    DEPENDS ${CMAKE_SOURCE_DIR}/${doc} VERBATIM)
  list(APPEND ROCEQOS_DEB_DOCS_GZ ${gz})
  # One install() per file, not the directory: a doc deleted from the tree leaves its .gz behind
  # in the build directory, which must not be packaged.
  get_filename_component(reldir ${doc} DIRECTORY)
  install(FILES ${gz} DESTINATION ${ROCEQOS_DEB_DOC}/${reldir} COMPONENT system EXCLUDE_FROM_ALL)
endforeach()
add_custom_target(deb-files DEPENDS ${ROCEQOS_DEB_OUT}/roce_qos_exporter.8.gz
                  ${ROCEQOS_DEB_OUT}/changelog.gz ${ROCEQOS_DEB_OUT}/policy-default.yaml
                  ${ROCEQOS_DEB_DOCS_GZ})

# The unit and the enforce drop-in name the binary at the install prefix (deploy/systemd/ says
# /usr/local/bin, where a plain cmake --install puts it): rewritten at install time, when the
# prefix (CPack: /usr) is known.
install(CODE "set(ROCEQOS_SYSTEMD_SRC \"${CMAKE_SOURCE_DIR}/deploy/systemd\")
              set(ROCEQOS_STAGE \"${ROCEQOS_DEB_OUT}/stage\")"
        COMPONENT system EXCLUDE_FROM_ALL)
install(SCRIPT ${ROCEQOS_DEB_SRC}/install-units.cmake COMPONENT system EXCLUDE_FROM_ALL)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/systemd/roce-qos-exporter.default
        DESTINATION /etc/default RENAME roce-qos-exporter COMPONENT system EXCLUDE_FROM_ALL)
install(FILES ${ROCEQOS_DEB_SRC}/copyright ${ROCEQOS_DEB_OUT}/changelog.gz
        DESTINATION ${ROCEQOS_DEB_DOC} COMPONENT system EXCLUDE_FROM_ALL)
install(FILES ${ROCEQOS_DEB_OUT}/policy-default.yaml
              ${CMAKE_SOURCE_DIR}/deploy/policy/policy.example.yaml
        DESTINATION ${ROCEQOS_DEB_DOC}/examples COMPONENT system EXCLUDE_FROM_ALL)
install(FILES ${ROCEQOS_DEB_SRC}/lintian-overrides DESTINATION share/lintian/overrides
        RENAME ${ROCEQOS_DEB_NAME} COMPONENT system EXCLUDE_FROM_ALL)

# cpack runs the "preinstall" target, which builds `all` (unit tests, benchmarks) first unless
# this is set; the package needs only roce_qos_exporter and deb-files, which scripts/build-deb
# builds. (`cmake --install` never builds anything, so it is unaffected.)
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ${ROCEQOS_DEB_NAME})
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${ROCEQOS_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Prometheus exporter and QoS drift alerter for RoCEv2")
# The extended description (CPack indents it and writes the summary as the synopsis).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "roce_qos_exporter samples per-priority PFC, discard, ECN and CNP counters and
the DCB/QoS state of NVIDIA/Mellanox ConnectX (mlx5) NICs far faster than
Prometheus scrapes, serves them on /metrics, and compares the QoS state with a
desired policy (drift metrics, the check subcommand, optional re-application of
the policy).

The systemd unit runs in observe mode (no capability, DynamicUser); like any
Debian service it is enabled and started on installation (policy-rc.d and
`systemctl disable` are respected) and restarted on upgrade.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# liblldpctl.so.4 is loaded at run time (dlopen) and ships inside lldpd, so it is not in NEEDED and
# dpkg-shlibdeps leaves it out. Suggests, not Recommends: installing lldpd starts a daemon that
# sends LLDP frames on every port, a decision for the administrator (examples/lldp.conf).
set(CPACK_DEBIAN_PACKAGE_SUGGESTS lldpd)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The maintainer scripts do what dh_installsystemd's would (postinst says what, and why by hand).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${ROCEQOS_DEB_SRC}/conffiles ${ROCEQOS_DEB_SRC}/postinst
    ${ROCEQOS_DEB_SRC}/prerm ${ROCEQOS_DEB_SRC}/postrm)
set(CPACK_STRIP_FILES ON)
# DESTDIR staging: CMAKE_INSTALL_PREFIX is /usr while the install scripts run, so the absolute
# destinations (/etc/default, /lib/systemd/system) and the unit's ExecStart come out right.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_WARN_ON_ABSOLUTE_INSTALL_DESTINATION OFF)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL Unspecified system)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
include(CPack)
