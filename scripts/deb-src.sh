# Sourced by build-instrumented.sh and build-workloads.sh: a deb-src entry
# for the system's Debian archive, added when none is configured (as root)
# and removed again at exit. Needs die() and log_dir set by the caller.
#   deb_src_ensure NAME   NAME labels messages
have_deb_src() {
  grep -Eqs '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list ||
    grep -Eqs '^Types:.*deb-src' /etc/apt/sources.list.d/*.sources
}

deb_src_added=
deb_src_cleanup() {
  if [ -n "$deb_src_added" ] && [ "${KEEP_DEB_SRC:-0}" != 1 ]; then
    rm -f "$deb_src_added"
    echo "$deb_src_name: removed $deb_src_added; apt-get update" >&2
    apt-get update -qq >"$log_dir/apt-update.log" 2>&1 ||
      echo "$deb_src_name: apt-get update failed (see $log_dir/apt-update.log)" >&2
  fi
}

# deb-src for the archive the system already uses: same URIs, suites and key.
deb_src_ensure() {
  deb_src_name=$1
  have_deb_src && return 0
  [ "$(id -u)" = 0 ] || die "no deb-src entry in /etc/apt and not root: add one (Types: deb-src) and run apt-get update"
  local sys=/etc/apt/sources.list.d/debian.sources new=/etc/apt/sources.list.d/llcprobe-deb-src.sources
  [ -f "$sys" ] || die "no deb-src entry and no $sys to copy one from: add a deb-src entry by hand"
  # Each stanza of the system file, with Types: deb replaced by deb-src.
  sed -E 's/^Types:[[:space:]]*deb[[:space:]]*$/Types: deb-src/' "$sys" >"$new.tmp"
  grep -q '^Types: deb-src' "$new.tmp" || { rm -f "$new.tmp"; die "$sys has no 'Types: deb' stanza to mirror"; }
  mv "$new.tmp" "$new"
  deb_src_added=$new
  trap deb_src_cleanup EXIT
  echo "$deb_src_name: added $new (deb-src mirroring $sys); apt-get update" >&2
  apt-get update -qq >"$log_dir/apt-update.log" 2>&1 ||
    die "apt-get update failed (see $log_dir/apt-update.log)"
}
