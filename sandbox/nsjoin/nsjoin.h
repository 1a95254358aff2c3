#ifndef TETHER_NSJOIN_H
#define TETHER_NSJOIN_H

// argv[1] of the joining process (Arg in nsjoin.go).
#define NSJOIN_ARG "--tether-protect-join"

// The descriptors it inherits: the sandbox's user and mount namespaces.
#define NSJOIN_USERNS_FD 3
#define NSJOIN_MNTNS_FD 4

#endif
