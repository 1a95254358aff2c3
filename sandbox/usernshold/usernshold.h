#ifndef TETHER_USERNSHOLD_H
#define TETHER_USERNSHOLD_H

// argv[1] of the holder (Arg in usernshold.go).
#define USERNSHOLD_ARG "--tether-userns-hold"

#endif
