# Writes the package's Debian changelog (one entry: the project version; a native package keeps
# it as /usr/share/doc/<package>/changelog.gz). cmake -DVERSION= -DEPOCH= -DMAINTAINER=
# -DPACKAGE= -DOUT= -P changelog.cmake
set(ENV{SOURCE_DATE_EPOCH} "${EPOCH}")
string(TIMESTAMP date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE "${OUT}" "${PACKAGE} (${VERSION}) unstable; urgency=medium

  * Release ${VERSION}: see the project's git history for the changes.

 -- ${MAINTAINER}  ${date}
")
