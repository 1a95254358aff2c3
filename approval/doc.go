// Package approval decides whether a terminal command may run: the rule catalog
// (hardline floor, approval tier, safe class) applied to the structure that
// package shellparse extracts, user deny globs, and the approval flow that asks
// a person (or a secondary model) when a command needs it.
//
// How each program reads its arguments, and what its options, operands and
// environment variables do, is package grammar's data; the catalog maps those
// effects to rule ids (rules_grammar.go). A program the grammar knows gets
// every rule its effects call for (a write to a disk device is hardline from
// any writer, an option that runs a program is approval and its text is
// analysed); an unknown option never lowers a verdict; a program the grammar
// does not know gets the generic rules (paths, redirections, environment,
// payloads). Adding a dangerous program is one entry in its grammar family.
//
// It is gate 3 of the pipeline (DESIGN.md §1–3). It needs no privileges and
// never spawns processes.
package approval
