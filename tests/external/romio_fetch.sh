#!/bin/sh
# romio_fetch.sh DEST - ROMIO's test programs (src/mpi/romio/test) from Debian's mpich source package,
# the version of the installed mpich, into DEST/test (the Makefile's setup step runs it).
#
# apt runs with a private configuration under DEST/apt (one deb-src entry for the mirror the
# system's apt uses, its own package lists and cache): the system's apt sources and state are
# never touched. The source package's hashes are checked by apt against the signed Release file.
# Only the test directory is unpacked: from the upstream tarball, with those of Debian's patches
# that touch it applied (the full `dpkg-source -x` when a patch touches it and other files too).
set -eu
dest=${1:?usage: romio_fetch.sh DEST}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
[ -f "$dest/test/runtests.in" ] && exit 0

version=$(dpkg-query -W -f='${source:Version}' mpich 2>/dev/null || true)
[ -n "$version" ] || { echo "romio_fetch.sh: mpich is not installed" >&2; exit 1; }

# The mirror the system uses for bookworm main (deb822 .sources or one-line .list files).
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list \
           2>/dev/null | awk '
  /^[[:space:]]*#/ { next }
  /^[[:space:]]*$/ { if (uri != "" && suite) { print uri; exit } uri = ""; suite = 0; next }
  /^URIs:/ { uri = $2 }
  /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") suite = 1 }
  /^deb[[:space:]]/ { for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { if ($(i + 1) == "bookworm") { print $i; exit } break } }
  END { if (uri != "" && suite) print uri }' | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}

apt="$dest/apt"
rm -rf "$apt"
mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/src"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main" \
  > "$apt/sources.list"
set -- -o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts="$apt/sources.list.d" \
       -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o APT::Sandbox::User=root
echo "fetching ROMIO's tests: mpich $version source from $mirror (apt configuration in $apt)"
apt-get -qq "$@" update
(cd "$apt/src" && apt-get -qq "$@" source --download-only "mpich=$version")

cd "$apt/src"
upstream=${version%-*}
tar -xf mpich_"$upstream".orig.tar.* "mpich-$upstream/src/mpi/romio/test"
tar -xf mpich_"$version".debian.tar.*
touched=""
if [ -f debian/patches/series ]; then
  for p in $(grep -v '^#' debian/patches/series); do
    grep -q '^+++ .*src/mpi/romio/test/' "debian/patches/$p" && touched="$touched $p"
  done
fi
if [ -n "$touched" ]; then
  # a patch changes the tests: unpack the source package exactly as Debian builds it
  rm -rf "mpich-$upstream"
  dpkg-source -q -x mpich_"$version".dsc "mpich-$upstream"
fi
rm -rf "$dest/test"
mv "mpich-$upstream/src/mpi/romio/test" "$dest/test"
echo "$version" > "$dest/test/DEBIAN_VERSION"
rm -rf "$apt/src" "$apt/cache" "$apt/lists"
echo "ROMIO's tests (mpich $version) in $dest/test"
