// Package shellparse turns a bash command string into a structural description
// of every simple command it can reach: the effective program after peeling
// wrappers, literal arguments, environment assignments, redirections, the
// context each command runs in, and the opaque segments whose effect cannot be
// known statically.
//
// It is the first step of the terminal gate (DESIGN.md §2). It is pure: no
// policy, no I/O, no processes, no privileges. Policy lives in package approval.
package shellparse
