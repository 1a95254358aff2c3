package shellparse

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Parse parses src as bash and returns every simple command reachable in it.
// It returns ErrTooLarge (wrapped) for input over the size limit and a
// *syntax.ParseError (wrapped) for input that does not parse.
//
// SCAFFOLD: this first version only checks size and syntax; the structural
// walk replaces it.
func Parse(src string, opts Options) (*Script, error) {
	max := opts.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	if len(src) > max {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(src), max)
	}
	p := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
	if _, err := p.Parse(strings.NewReader(src), ""); err != nil {
		return nil, fmt.Errorf("parsing command: %w", err)
	}
	return &Script{Source: src}, nil
}
