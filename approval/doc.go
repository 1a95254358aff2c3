// Package approval decides whether a terminal command may run: the rule catalog
// (hardline floor, approval tier, safe class) applied to the structure that
// package shellparse extracts, user deny globs, and the approval flow that asks
// a person (or a secondary model) when a command needs it.
//
// It is gate 3 of the pipeline (DESIGN.md §1–3). It needs no privileges and
// never spawns processes.
package approval
