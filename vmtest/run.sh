#!/usr/bin/env bash
# vmtest/run.sh: run the netem tests of package vmtest inside a qemu VM that
# boots Debian 12's stock kernel (which, unlike the build machines' kernel,
# has sch_netem). Exits 0 only if the tests passed inside the VM.
#
# Steps: install qemu if missing (apt-get); download the kernel package once
# into a cache and unpack it with dpkg -x (nothing is installed on the host);
# build /init and the test binary static (CGO_ENABLED=0, `go test -c`); pack
# them with the needed modules into an initramfs (vmtest/cmd/vmpack, no cpio
# or busybox needed); boot under TCG; read the serial console; decide.
#
# Environment (all optional):
#   VMTEST_CACHE     cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/quicbench-vmtest)
#   VMTEST_KERNEL    kernel package to use (default: the newest
#                    linux-image-6.1.0-N-amd64 apt offers, or the one cached)
#   VMTEST_TIMEOUT   seconds the VM may run before it counts as hung (default
#                    900); the tests inside get this less a minute (-test.timeout)
#   VMTEST_SMP       guest CPUs (default 2)
#   VMTEST_MEM       guest memory in MiB (default 1024)
#   VMTEST_RUN       -test.run regexp for the in-VM tests (default: all)
#   VMTEST_ACCEL     qemu accelerator (default tcg; kvm hung in nested setups)
#   VMTEST_QEMU_ARGS extra qemu arguments (word-split), e.g. "-cpu host"
#   VMTEST_VERBOSE=1 show kernel boot messages (default: quiet)
#   VMTEST_BREAK     loss|delay|rate|limit|noloss: deliberately break
#                    shapedlink's netem encoding in a scratch copy of the
#                    tree (vmtest/break.sh) and run the tests that cover it.
#                    The verdict is inverted: exit 0 only if the in-VM tests
#                    FAILED, which proves CI would catch that breakage
set -euo pipefail

T0=$(date +%s)
say() { printf '[vmtest +%3ss] %s\n' "$(($(date +%s) - T0))" "$*"; }
die() { say "FAIL: $*"; exit 1; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${VMTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/quicbench-vmtest}
vm_timeout=${VMTEST_TIMEOUT:-900}
smp=${VMTEST_SMP:-2}
mem=${VMTEST_MEM:-1024}
accel=${VMTEST_ACCEL:-tcg}
# Modules the tests need. nf_tables/nft_numgen are there so that shapedlink's
# nftables helpers can be exercised too; tcp_bbr for congestion-control
# pinning; sch_tbf and sch_codel for the queue disciplines on netem (Debian
# builds fq_codel in, codel as a module). Dependencies ("depends=") are added by
# vmpack; soft dependencies are not, so crc32c_generic, which libcrc32c (a
# dependency of nf_tables) asks for as "softdep=pre: crc32c", is listed here.
modules=${VMTEST_MODULES:-sch_netem,veth,tcp_bbr,sch_tbf,sch_codel,crc32c_generic,nf_tables,nft_objref,nft_numgen}

work=$(mktemp -d "${TMPDIR:-/tmp}/quicbench-vmtest.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$cache"

apt_updated=0
apt_update() {
	if [ "$apt_updated" = 0 ]; then
		say "apt-get update"
		apt-get update -qq >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; die "apt-get update failed"; }
		apt_updated=1
	fi
}

# 1. Host tools.
if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
	apt_update
	say "installing qemu-system-x86"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-system-x86 >"$work/apt.log" 2>&1 ||
		{ cat "$work/apt.log"; die "apt-get install qemu-system-x86 failed"; }
fi
command -v go >/dev/null 2>&1 || die "go is not on PATH"
say "qemu: $(qemu-system-x86_64 --version | head -1)"

# 2. The kernel package: cached .deb, unpacked once with dpkg -x.
pkg=${VMTEST_KERNEL:-}
if [ -z "$pkg" ] && [ -s "$cache/kernel-package" ]; then
	pkg=$(cat "$cache/kernel-package")
	[ -d "$cache/$pkg/boot" ] || pkg=""
fi
if [ -z "$pkg" ]; then
	apt_update
	# The newest linux-image-6.1.0-N-amd64 that apt has a candidate for.
	# (One apt-cache policy call, parsed whole: grep -q under pipefail
	# would fail the pipeline by killing apt-cache with SIGPIPE.)
	names=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' | awk '{print $1}')
	[ -n "$names" ] || die "apt knows no linux-image-6.1.0-*-amd64 package (is this Debian 12 with its main and security archives?)"
	# shellcheck disable=SC2086
	pkg=$(apt-cache policy $names | awk '/^[^ ].*:$/ { p = $1; sub(/:$/, "", p) } /Candidate: [0-9]/ { print p }' | sort -V | tail -1)
	[ -n "$pkg" ] || die "no linux-image-6.1.0-*-amd64 package available from apt (is this Debian 12 with its main archive?)"
fi
if [ ! -d "$cache/$pkg/boot" ]; then
	if ! ls "$cache/$pkg"_*.deb >/dev/null 2>&1; then
		apt_update
		say "downloading $pkg into $cache"
		(cd "$cache" && apt-get download -q "$pkg" >"$work/apt.log" 2>&1) || { cat "$work/apt.log"; die "apt-get download $pkg failed"; }
	fi
	say "unpacking $pkg (dpkg -x, not installed)"
	rm -rf "$cache/$pkg.tmp"
	dpkg -x "$(ls "$cache/$pkg"_*.deb | tail -1)" "$cache/$pkg.tmp"
	mv "$cache/$pkg.tmp" "$cache/$pkg"
fi
echo "$pkg" >"$cache/kernel-package"
kroot=$cache/$pkg
vmlinuz=$(ls "$kroot"/boot/vmlinuz-* | head -1)
kver=${vmlinuz##*/vmlinuz-}
kmod=$kroot/lib/modules/$kver
[ -d "$kmod" ] || die "no module directory $kmod in $pkg"
grep -q '^CONFIG_NET_SCH_NETEM=[my]' "$kroot/boot/config-$kver" || die "$pkg's config has no CONFIG_NET_SCH_NETEM"
say "kernel: $pkg ($kver, cached in $cache)"

# 3. Source tree: the checkout itself, or a scratch copy with a deliberate
# breakage applied (VMTEST_BREAK).
src=$repo
if [ -n "${VMTEST_BREAK:-}" ]; then
	src=$work/src
	mkdir -p "$src"
	(cd "$repo" && tar --exclude=.git -cf - .) | (cd "$src" && tar -xf -)
	tests=$(bash "$repo/vmtest/break.sh" "$src" "$VMTEST_BREAK") || die "could not apply VMTEST_BREAK=$VMTEST_BREAK"
	VMTEST_RUN=${VMTEST_RUN:-$tests}
	say "VMTEST_BREAK=$VMTEST_BREAK: expecting the in-VM tests ($VMTEST_RUN) to FAIL"
fi

# 4. Build the static binaries and the initramfs.
say "building /init, the test binary and the initramfs (CGO_ENABLED=0)"
(
	cd "$src"
	export CGO_ENABLED=0
	go build -trimpath -o "$work/vminit" ./vmtest/cmd/vminit
	go test -c -trimpath -o "$work/vmtest.test" ./vmtest
	go build -o "$work/vmpack" ./vmtest/cmd/vmpack
) || die "build failed"
"$work/vmpack" -kmod "$kmod" -init "$work/vminit" -test "$work/vmtest.test" -modules "$modules" -o "$work/initramfs.cpio" ||
	die "packing the initramfs failed"
say "initramfs: $(du -h "$work/initramfs.cpio" | cut -f1)"

# 5. Boot.
append="console=ttyS0 panic=-1"
[ "${VMTEST_VERBOSE:-0}" = 1 ] || append="$append quiet"
[ -z "${VMTEST_RUN:-}" ] || append="$append vmtest.run=$VMTEST_RUN"
# The tests' own timeout ends a hung test with its goroutines' stacks on
# the console before the VM's timeout kills qemu without them.
[ "$vm_timeout" -le 120 ] || append="$append vmtest.timeout=$((vm_timeout - 60))s"
note=""
[ "$accel" != tcg ] || note=" (TCG emulates every instruction: timings inside are loose)"
say "booting under $accel, $smp CPUs, ${mem} MiB, timeout ${vm_timeout}s$note"
set +e
timeout -k 10 "$vm_timeout" qemu-system-x86_64 -accel "$accel" -smp "$smp" -m "$mem" -nographic -nic none \
	-kernel "$vmlinuz" -initrd "$work/initramfs.cpio" -append "$append" -no-reboot ${VMTEST_QEMU_ARGS:-} </dev/null 2>&1 |
	tr -d '\r' | sed -u -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' | tee "$work/console.log"
qrc=${PIPESTATUS[0]}
set -e
say "VM stopped (qemu exit $qrc)"

# 6. Verdict.
result=$(grep -a '^VMTEST-RESULT: ' "$work/console.log" | tail -1 || true)
verdict=fail
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	reason="the VM did not finish within ${vm_timeout}s"
elif [ -z "$result" ]; then
	reason="the VM printed no VMTEST-RESULT line (qemu exit $qrc): boot or init failed"
elif [[ "$result" == "VMTEST-RESULT: PASS"* ]]; then
	verdict=pass
	reason=${result#VMTEST-RESULT: }
else
	reason=${result#VMTEST-RESULT: }
fi
grep -a -E '^(--- FAIL|    --- FAIL)' "$work/console.log" >"$work/failed.txt" || true
if [ -n "${VMTEST_BREAK:-}" ]; then
	if [ "$verdict" = fail ] && [ -n "$result" ]; then
		say "OK: the in-VM tests failed, as expected with VMTEST_BREAK=${VMTEST_BREAK:-}:"
		sed 's/^/    /' "$work/failed.txt"
		exit 0
	fi
	die "VMTEST_BREAK=$VMTEST_BREAK: expected the in-VM tests to fail, but got: $reason"
fi
if [ "$verdict" = pass ]; then
	say "PASS: $reason (total $(($(date +%s) - T0))s)"
	exit 0
fi
[ ! -s "$work/failed.txt" ] || { say "failed tests:"; sed 's/^/    /' "$work/failed.txt"; }
die "$reason"
