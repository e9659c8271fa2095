# Shared helpers for the scripts in this folder. Source it: `source "$(dirname "$0")/lib.sh"`.
# Sets REPO (the repository root, also the working directory) and puts cargo's bin on PATH.

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
# Non-interactive and quiet where it matters; CI=true is honoured by npm, cargo and vitest.
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

# Prints a section header: section "Title".
section() {
  printf '\n\033[1m==> %s\033[0m\n' "$1"
}

# Prints a message and exits non-zero: die "message".
die() {
  printf '\033[31merror:\033[0m %s\n' "$1" >&2
  exit 1
}

# Seconds since the epoch, for timing sections.
now() {
  date +%s
}

# Installs Debian packages with apt-get (as root, or through sudo), updating the package lists
# only if the first attempt fails: apt_install "why" package...
apt_install() {
  local why="$1"
  shift
  section "apt-get install $* ($why)"
  command -v apt-get >/dev/null || die "apt-get is missing: install $* by hand ($why)"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y --no-install-recommends "$@" ||
    { $sudo apt-get update && $sudo apt-get install -y --no-install-recommends "$@"; }
}

# True when bindgen (clang-sys) would find a libclang to load: libclang.so, libclang-N.so or
# libclang.so.N (libclang-cpp.so.N is another library, which machines often have alone), in
# $LIBCLANG_PATH (a directory, or the file) when it is set, else where clang-sys looks (/usr/lib*,
# /usr/local/lib*, up to three directories down).
have_libclang() {
  local where=(/usr/lib* /usr/local/lib*) depth=4
  [ -z "${LIBCLANG_PATH:-}" ] || { where=("$LIBCLANG_PATH"); depth=1; }
  [ -n "$(find "${where[@]}" -maxdepth "$depth" \( -name libclang.so -o -name 'libclang.so.*' \
    -o -name 'libclang-*.so' -o -name 'libclang-*.so.*' \) ! -name '*-cpp.*' -print -quit 2>/dev/null)" ]
}

# Installs what is missing (scripts/setup.sh), then builds the WebAssembly module and the
# `shaledb` package (both quick when up to date): what the demos need before they run.
setup_and_build() {
  bash scripts/setup.sh
  section "build the WebAssembly module (scripts/build-wasm.sh)"
  bash scripts/build-wasm.sh
  section "build the shaledb package (npm run build -w shaledb)"
  npm run --silent build -w shaledb
}
