#ifndef TETHER_KEEPER_H
#define TETHER_KEEPER_H

// argv[1] of the keeper (Arg in keeper.go): [exe, KEEPER_ARG, owner pid].
#define KEEPER_ARG "--tether-keeper"

// argv[1] of the process the keeper executes when its owner died with
// sandboxes outstanding (ReapArg in keeper.go): [exe, KEEPER_REAP_ARG,
// state root, cgroup prefix, state root, cgroup prefix, ...].
#define KEEPER_REAP_ARG "--tether-keeper-reap"

// The most (state root, cgroup prefix) pairs with outstanding sandboxes a
// keeper tracks at once, and the longest line it accepts.
#define KEEPER_MAX_PAIRS 256
#define KEEPER_MAX_LINE 8192

#endif
