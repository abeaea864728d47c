# Sourced by scripts/test.sh and scripts/bench.sh: what building the cargo feature
# `kerberos` needs (its GSSAPI binding is generated from the system's headers with
# libclang, and links MIT's libgssapi_krb5), installed from Debian's packages when missing.
#
#   kerberos_build_deps    0 when the feature can be built (after installing what was
#                          missing); otherwise 1, having said why in one line
kerberos_build_deps() {
  local need=()
  command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
  pkg-config --exists krb5-gssapi 2>/dev/null || need+=(libkrb5-dev)
  compgen -G "/usr/lib/llvm-*/lib/libclang.so" >/dev/null || compgen -G "/usr/lib/*/libclang.so" >/dev/null ||
    need+=(libclang-dev)
  [ ${#need[@]} -eq 0 ] && return 0
  local sudo=() log
  [ "$(id -u)" -eq 0 ] || sudo=(sudo -n)
  log="$(mktemp -t tallrow-apt.XXXXXX)"
  echo "installing ${need[*]} from Debian's packages (the Kerberos feature's build needs them)" >&2
  if { "${sudo[@]}" apt-get update -q && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q \
    --no-install-recommends "${need[@]}"; } >"$log" 2>&1; then
    rm -f "$log"
    return 0
  fi
  echo "no Kerberos build on this machine: apt-get install ${need[*]} failed ($log); tallrow is built and tested without the kerberos feature" >&2
  return 1
}
