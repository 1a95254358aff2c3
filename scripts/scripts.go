// Package scripts embeds the shell scripts that the tether binary runs
// itself, so that an installed binary works from any directory: `tether rootfs
// build` runs rootfs-busybox.sh or rootfs-debootstrap.sh with `bash -c`. The
// same files stay runnable by hand from a checkout.
//
// The other files in this directory (provisioning, benchmarks, integration
// helpers) are for developers and are not embedded.
package scripts

import _ "embed"

// RootfsBusybox is scripts/rootfs-busybox.sh: TARGET; env BUSYBOX.
//
//go:embed rootfs-busybox.sh
var RootfsBusybox string

// RootfsDebootstrap is scripts/rootfs-debootstrap.sh: TARGET SUITE MIRROR; env
// DEBOOTSTRAP.
//
//go:embed rootfs-debootstrap.sh
var RootfsDebootstrap string
