#ifndef TETHER_MEMFDNOEXEC_H
#define TETHER_MEMFDNOEXEC_H

// argv[1] of the helper process (Arg in memfdnoexec.go).
#define MEMFDNOEXEC_ARG "--tether-memfd-noexec"

// The descriptor it inherits: the sandbox's pid namespace.
#define MEMFDNOEXEC_PIDNS_FD 3

#endif
