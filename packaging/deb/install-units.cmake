# Install-time script (packaging/deb/package.cmake): the systemd unit and the enforce drop-in with
# ExecStart at ${CMAKE_INSTALL_PREFIX}/bin, known only now (CPack: /usr; deploy/systemd/ says
# /usr/local, where a plain `cmake --install` puts the binary).
# Inputs: ROCEQOS_SYSTEMD_SRC (deploy/systemd), ROCEQOS_STAGE (a scratch directory).
set(exe "${CMAKE_INSTALL_PREFIX}/bin/roce_qos_exporter")
set(doc "${CMAKE_INSTALL_PREFIX}/share/doc/roce-qos-exporter")
file(MAKE_DIRECTORY "${ROCEQOS_STAGE}")

function(rewrite src dst)
  file(READ "${src}" text)
  string(REPLACE "/usr/local/bin/roce_qos_exporter" "${exe}" text "${text}")
  # The packaged docs: the man page and the deployment guide under /usr/share/doc (one
  # Documentation= line; the source unit's second URI is the project's web copy).
  string(REGEX REPLACE "\nDocumentation=[^\n]*"
         "\nDocumentation=man:roce_qos_exporter(8) file:${doc}/docs/deployment.md.gz" text
         "${text}")
  string(REPLACE " (cmake --install), this file in\n# /etc/systemd/system/"
         ", this file in\n# /lib/systemd/system/" text "${text}")
  if(NOT text MATCHES "ExecStart=${exe}")
    message(FATAL_ERROR "${src}: no ExecStart=/usr/local/bin/roce_qos_exporter to rewrite")
  endif()
  file(WRITE "${dst}" "${text}")
endfunction()

rewrite("${ROCEQOS_SYSTEMD_SRC}/roce-qos-exporter.service"
        "${ROCEQOS_STAGE}/roce-qos-exporter.service")
rewrite("${ROCEQOS_SYSTEMD_SRC}/roce-qos-exporter.service.d/enforce.conf"
        "${ROCEQOS_STAGE}/enforce.conf")
file(INSTALL DESTINATION "/lib/systemd/system" TYPE FILE
     FILES "${ROCEQOS_STAGE}/roce-qos-exporter.service")
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/doc/roce-qos-exporter/examples" TYPE FILE
     FILES "${ROCEQOS_STAGE}/enforce.conf"
           "${ROCEQOS_SYSTEMD_SRC}/roce-qos-exporter.service.d/optics.conf"
           "${ROCEQOS_SYSTEMD_SRC}/roce-qos-exporter.service.d/lldp.conf"
           "${ROCEQOS_SYSTEMD_SRC}/roce-qos-exporter.service.d/attribution.conf")
