package sandbox

import (
	"fmt"

	"github.com/tether-dev/tether/internal/protect"
)

// gitRepo is a frozen git directory and the top of its work tree (the git
// directory itself for a bare repository), both workspace-relative.
type gitRepo struct{ dir, top string }

// configPath is a workspace path a repository's configuration names.
type configPath struct {
	rel     string
	kind    protect.Kind
	reserve bool // frozen even when missing: git would read or run what appears
}

// gitConfigPaths returns the workspace paths that the configuration of
// repos names, by protect.ConfigNamed (the resolver the file tools use
// too), read beneath root without following symlinks. A hooks directory
// that is a work tree's top cannot be frozen without freezing the whole
// tree: it is refused (ErrUnsafeWorkspace).
func gitConfigPaths(root int, ws string, repos []gitRepo) ([]configPath, error) {
	rs := make([]protect.GitRepo, len(repos))
	for i, r := range repos {
		rs[i] = protect.GitRepo{Dir: r.dir, Top: r.top}
	}
	named, err := protect.ConfigNamed(root, ws, rs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsafeWorkspace, err)
	}
	out := make([]configPath, len(named))
	for i, n := range named {
		out[i] = configPath{rel: n.Rel, kind: n.Kind, reserve: n.Reserve}
	}
	return out, nil
}
