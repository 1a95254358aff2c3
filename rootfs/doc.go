// Package rootfs describes, builds and checks the root filesystems that
// sandboxed commands run in (DESIGN.md §5). It sits below package sandbox:
// sandbox turns a Layout into mounts; rootfs itself never enters a namespace.
//
// A root is either the host layout (the host's system directories bound
// read-only into an otherwise empty root, see HostLayout) or a prepared
// directory (see DirLayout). Prepared directories are made by Build — behind
// `tether rootfs build --from busybox|debootstrap DIR` — from Debian's static
// busybox (package busybox-static, no privileges needed) or with debootstrap
// (package debootstrap, needs root and a Debian mirror). Build runs the
// scripts embedded from the scripts/ directory, builds into a temporary
// sibling directory and renames it into place, so a failed build leaves
// nothing half made.
//
// Validate checks that a directory can serve as a root (an executable
// /bin/sh, with its loader, and the mount points the sandbox needs); Build
// calls it on every result and the sandbox calls it before using a --rootfs
// directory. Its errors wrap ErrUnusableRoot.
package rootfs
